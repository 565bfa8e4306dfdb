import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Bucket parts (SPEC.md §7.6): a device splits large index shards into 16 sealed parts so a
/// lookup of one host, name, attribute or record reads 1/16 of its bucket. The threshold is
/// lowered through the API so these small vaults are split; every answer must be the one the
/// shards give, and a part may only ever answer for the shard it was cut from.
final class BucketPartsTests: XCTestCase {
    private func splittingVault(threshold: Int = 0) throws -> Vault {
        var configuration = Fixture.configuration()
        configuration.bucketPartsThreshold = threshold
        return try Vault.create(
            in: GroupContainer(path: Fixture.containerPath()), masterPassword: Fixture.secret(), kdf: KDFPolicy.testingParameters,
            configuration: configuration)
    }

    private func partsFiles(_ vault: Vault) -> [String] {
        let directory = vault.deviceState.listingPath.replacingOccurrences(of: "/listing", with: "")
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("parts-") }.sorted()
    }

    private func users(_ vault: Vault, _ host: String) throws -> [String] {
        try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(identifier: host, type: .domain)], minimumLevel: .host)
            .map(\.identity.user).sorted()
    }

    private func fill(_ vault: Vault) throws {
        for index in 0..<40 { try vault.add(Fixture.draft("host\(index).example.com", user: "user\(index)", password: "pw\(index)")) }
        try vault.add([RecordDraft(serviceIdentifiers: [], user: "", password: "", name: "Alarm Code", kind: .note)])
    }

    func testLookupsFromPartsAnswerAsTheShardsDo() throws {
        let vault = try splittingVault()
        try fill(vault)
        for index in 0..<40 {
            XCTAssertEqual(try users(vault, "host\(index).example.com"), ["user\(index)"])
        }
        XCTAssertFalse(partsFiles(vault).isEmpty, "every bucket looked up was cut into parts")
        // Again, now from the parts: identities, a name, and the ledger of a record read.
        for index in 0..<40 {
            XCTAssertEqual(try users(vault, "host\(index).example.com"), ["user\(index)"])
        }
        XCTAssertEqual(try vault.identityStore.items(named: "alarm code").map(\.name), ["Alarm Code"])
        let filled = try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(identifier: "host7.example.com", type: .domain)])
        XCTAssertEqual(try vault.record(withID: RecordID(hex: filled[0].identity.recordIdentifier)).password, "pw7")
        XCTAssertTrue(partsFiles(vault).contains { $0.hasPrefix("parts-1") }, "ledger shards are cut too")
        XCTAssertEqual(try users(vault, "nothing.example.com"), [])

        // With the shards themselves unreadable, the parts alone answer: they are what is read.
        for file in Fixture.allFiles(under: vault.container.indexDirectory + "/shards") {
            try Data("damaged".utf8).write(to: URL(fileURLWithPath: file))
        }
        for index in 0..<40 {
            XCTAssertEqual(try users(vault, "host\(index).example.com"), ["user\(index)"])
        }
        XCTAssertEqual(try vault.record(withID: RecordID(hex: filled[0].identity.recordIdentifier)).password, "pw7")

        for name in partsFiles(vault) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: vault.deviceState.listingPath.replacingOccurrences(of: "listing", with: name)))
            XCTAssertNil(bytes.range(of: Data("host".utf8)), "sealed: no name in \(name)")
            XCTAssertNil(bytes.range(of: Data("user".utf8)))
        }
    }

    /// A part answers only for the shard the manifest names: after a change the old parts are
    /// passed over; a damaged part or another slot's parts are refused, and the shard answers.
    func testPartsAnswerOnlyForTheirOwnShard() throws {
        let vault = try splittingVault()
        try fill(vault)
        XCTAssertEqual(try users(vault, "host3.example.com"), ["user3"])
        let before = Set(partsFiles(vault))
        try vault.add(Fixture.draft("host3.example.com", user: "second"))
        XCTAssertEqual(try users(vault, "host3.example.com"), ["second", "user3"], "a change is seen at once")

        let directory = vault.deviceState.listingPath.replacingOccurrences(of: "/listing", with: "")
        for name in partsFiles(vault) {  // damage every part past the header
            let path = directory + "/" + name
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for offset in stride(from: IdentityIndex.partsHeaderLength + 30, to: bytes.count, by: 40) { bytes[offset] ^= 0x01 }
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        for index in 0..<40 where index != 3 {
            XCTAssertEqual(try users(vault, "host\(index).example.com"), ["user\(index)"], "damaged parts fall back to the shard")
        }
        XCTAssertEqual(try users(vault, "host3.example.com"), ["second", "user3"])

        // Every parts file swapped for another slot's: bound to its slot, never read for this one.
        let names = partsFiles(vault).filter { $0.hasPrefix("parts-0") }
        XCTAssertGreaterThan(names.count, 1)
        let first = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + names[0]))
        for name in names.dropFirst() { try first.write(to: URL(fileURLWithPath: directory + "/" + name)) }
        for index in 0..<40 where index != 3 {
            XCTAssertEqual(try users(vault, "host\(index).example.com"), ["user\(index)"])
        }
        XCTAssertFalse(before.isEmpty)
    }

    /// Parts are kept only where the identity store is enabled, and go with it.
    func testPartsGoWithTheStore() throws {
        let vault = try splittingVault()
        try fill(vault)
        XCTAssertEqual(try users(vault, "host1.example.com"), ["user1"])
        XCTAssertFalse(partsFiles(vault).isEmpty)
        try vault.identityStore.disable()
        XCTAssertEqual(partsFiles(vault), [], "disabling removes them with the index key")
        XCTAssertEqual(try users(vault, "host1.example.com"), ["user1"], "unlocked, the shards answer")
        XCTAssertEqual(partsFiles(vault), [], "and nothing is cut on a device that turned the store off")
    }

    /// Below the threshold nothing is cut: a small vault reads its shards as before.
    func testSmallBucketsAreNotCut() throws {
        let vault = try splittingVault(threshold: 32 << 10)
        try fill(vault)
        XCTAssertEqual(try users(vault, "host1.example.com"), ["user1"])
        XCTAssertEqual(partsFiles(vault), [])
    }
}
