import Coffer
@testable import CofferProvider
@testable import CofferStore
import XCTest

/// `verify` compares the index with the records by fingerprints, one records shard at a time
/// (a million entries kept whole took it past a gigabyte): what the store may change (remove an
/// identity, re-rank one) stays clean, and an entry the record does not hold is still named,
/// with the record and the entry.
final class VerifyIndexTests: XCTestCase {
    func testStoreChangesAreCleanAndAForeignIdentityIsNamed() throws {
        let vault = try Fixture.vault()
        let store = CredentialIdentityStore(vault: vault)
        try store.enable()
        let records = try (0..<40).map { try vault.add(Fixture.draft("site\($0).example", user: "user\($0)")) }
        let first = records[0], second = records[1]
        let identity = { (record: Record, rank: Int) in
            PasswordCredentialIdentity(
                serviceIdentifier: record.serviceIdentifiers[0], user: record.user, recordIdentifier: record.id.hex, rank: rank)
        }
        try store.saveCredentialIdentities([identity(first, 7)])
        try store.removeCredentialIdentities([identity(second, 0)])
        let clean = vault.verify()
        XCTAssertTrue(clean.isClean, "\(clean.problems)")
        XCTAssertEqual(clean.recordCount, 40)

        let foreign = PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: "elsewhere.example", type: .domain), user: first.user,
            recordIdentifier: first.id.hex)
        try store.saveCredentialIdentities([foreign])
        let report = vault.verify()
        XCTAssertEqual(report.problems.map(\.file), [vault.container.recordPath(first.id)])
        XCTAssertEqual(
            report.problems.first?.message,
            "the identity store offers user0@elsewhere.example, which the record does not hold")
    }
}
