import Synchronization
import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// The reference writer's container (SPEC.md §18) opens in Swift, and Swift reproduces its bytes.
final class VaultVectorTests: XCTestCase {
    var vector: VectorFile!

    override func setUpWithError() throws {
        vector = try VectorFile.load("vault/vault.vector")
    }

    func copyOfContainer() throws -> GroupContainer { try Self.privateCopy() }

    /// A private copy: the bundle's files may be group-readable, which a container must not be.
    static func privateCopy(of vector: String = "vault") throws -> GroupContainer {
        let path = Fixture.containerPath()
        try FileManager.default.copyItem(atPath: VectorFile.directory + "/\(vector)/container", toPath: path)
        let files = Set(Fixture.allFiles(under: path))
        for case let relative as String in FileManager.default.enumerator(atPath: path)! {
            chmod(path + "/" + relative, files.contains(path + "/" + relative) ? 0o600 : 0o700)
        }
        chmod(path, 0o700)
        return GroupContainer(path: path)
    }

    func testReferenceContainerOpensWithItsPassword() throws {
        let vault = try Vault.open(copyOfContainer(), configuration: Fixture.configuration())
        XCTAssertEqual(vault.vaultID.hex, vector.string("vault_id"))
        try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
        var records = try vault.allRecords()
        XCTAssertEqual(records.map(\.id.hex), [vector.string("record0_id"), vector.string("record3_id"), vector.string("record4_id"),
                                                vector.string("record5_id"), vector.string("record2_id"), vector.string("record1_id")])
        let card = records.remove(at: 2), identity = records.remove(at: 2)
        XCTAssertEqual(card.kind, .card)
        XCTAssertEqual(card.card, CardMember(
            cardholder: "Zoë Example", number: "4111111111111111", brand: "Visa", expiryMonth: 7, expiryYear: 2029, securityCode: "123",
            pin: "0000", startMonth: 1, startYear: 2024, issueNumber: "2"), "every member of a card (SPEC.md §6.8)")
        XCTAssertEqual(identity.kind, .identity)
        XCTAssertEqual(identity.user, "zoe", "an identity's user name is the record's user")
        XCTAssertEqual(identity.identity, IdentityMember(
            title: "Dr", givenName: "Zoë", middleName: "Q", familyName: "Example", company: "Example SA",
            addressLines: ["12 Rue de l'Exemple", "Bâtiment B"], city: "Paris", region: "Île-de-France", postalCode: "75001", country: "FR",
            phone: "+33 1 23 45 67 89", email: "zoe@example.org", nationalIdentifier: "1 85 05 78 006 084 36", passportNumber: "19FV12345",
            licenseNumber: "D123"), "every member of an identity")
        let sshKey = records.remove(at: 1)
        let note = records.remove(at: 1)
        XCTAssertEqual(sshKey.kind, .sshKey)
        XCTAssertEqual(sshKey.sshPublicKeyText, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
                       "RFC 8032's first test key")
        let (key, comment) = try OpenSSHPrivateKey.decode(XCTUnwrap(sshKey.sshPrivateKeyText))
        XCTAssertEqual(comment, "laptop key")
        XCTAssertEqual(Hex.encode(try key.sign([])).prefix(16), "e5564300c360ac72", "signs as RFC 8032 §7.1 TEST 1 says")
        XCTAssertEqual(records[0].user, "alice")
        XCTAssertEqual(records[0].password, "hunter2")
        XCTAssertEqual(records[1].user, "zoë")
        XCTAssertEqual(records[1].password, "p@ss \"quoted\" \\ slash/")
        XCTAssertEqual(records[1].notes, "line one\nline two")
        XCTAssertEqual(records[1].fields, [
            RecordField(name: "pin", value: "1234"), RecordField(name: "recovery code", value: "R3C0-V3RY", hidden: true),
        ], "an ordered array of fields (SPEC.md §6.2)")
        XCTAssertEqual(records[1].name, "Example Org")
        XCTAssertEqual(records[1].kind, .login)
        XCTAssertEqual(records[1].tags, ["work", "favorite"])
        XCTAssertEqual(records[1].otp, "otpauth://totp/Example:zo%C3%AB?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        XCTAssertEqual(records[1].passwordHistory.map(\.password), ["older", "oldest"])
        XCTAssertEqual(note.kind, .note)
        XCTAssertEqual(note.name, "Wi-Fi at home")
        XCTAssertEqual(note.serviceIdentifiers, [], "a note has no service")
        XCTAssertEqual(records[1].revision, 7)
        XCTAssertEqual(records[0].matchMode, .host)
        XCTAssertEqual(records[1].matchMode, .exact, "the document's \"match\" member")
        XCTAssertEqual(records[1].serviceIdentifiers, [
            CredentialServiceIdentifier(identifier: "https://login.example.org/signin", type: .URL),
            CredentialServiceIdentifier(identifier: "example.org", type: .domain),
        ])
        XCTAssertEqual(records[1].created, ISO8601DateFormatter().date(from: "2025-12-31T23:59:59Z"))
    }

    func testReferenceIndexIsReadAndTheWholeContainerVerifies() throws {
        let vault = try Vault.open(copyOfContainer(), configuration: Fixture.configuration())
        try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
        let report = vault.verify()
        XCTAssertTrue(report.isClean, "\(report.problems)")
        XCTAssertEqual(report.generation, 1)
        XCTAssertTrue(report.checkedContents)
        let found = try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "https://www.example.org/")])
        XCTAssertEqual(found.map(\.identity.user), ["zoë"], "the reference writer's buckets are where Swift looks")
        XCTAssertEqual(found.first?.mode, .exact, "the entry's match mode byte")
        XCTAssertEqual(found.first?.allowsAutomaticFill, false, "a sibling of an exact-mode record is a suggestion")
        let exact = try vault.identityStore.credentialIdentities(
            for: [CredentialServiceIdentifier(parsing: "https://login.example.org/signin")], minimumLevel: .host)
        XCTAssertEqual(exact.map(\.match?.level), [.exactURL], "one host bucket, the reference's")
        XCTAssertEqual(exact.first?.allowsAutomaticFill, true)
        XCTAssertEqual(try vault.identityIndex().readManifest().layout, .details)
        XCTAssertEqual(try vault.identityStore.oneTimeCodeIdentities(for: [CredentialServiceIdentifier(parsing: "example.org")]).map(\.identity.user),
                       ["zoë"], "the one-time-code identity the reference filed")
        XCTAssertEqual(try vault.identityStore.items(named: "wi-fi AT home").map(\.recordID.hex), [vector.string("record2_id")],
                       "names are found case-insensitively in the one bucket of the name")
    }

    /// The reference writer's bucket parts (SPEC.md §7.6) of an identity bucket and a ledger
    /// shard: Swift picks the same part for a host and a record, opens the reference's part as
    /// the one plaintext it holds, and answers a fill from the parts alone once the shards are
    /// gone.
    func testReferenceBucketPartsAnswerLookups() throws {
        let container = try copyOfContainer()
        let vault = try Vault.open(container, configuration: Fixture.configuration())
        try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
        let index = try vault.identityIndex()
        let manifest = try index.readManifest()
        XCTAssertEqual(index.part(filingName: vector.string("parts_host")), vector.int("parts_part"))
        let stateDirectory = vault.deviceState.listingPath.replacingOccurrences(of: "/listing", with: "")
        for label in ["parts", "ledger_parts"] {
            let slot = vector.int("\(label)_slot")
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            try Data(vector.hex("\(label)_file")).write(to: URL(fileURLWithPath: stateDirectory + "/" + DeviceState.bucketPartsName(slot: slot)))
            XCTAssertEqual(try index.payload(inSlot: slot, part: vector.int("\(label)_part"), of: manifest), vector.hex("\(label)_plaintext"), label)
        }
        let record = try vault.record(withID: RecordID(hex: vector.string("record0_id")))
        try FileManager.default.removeItem(atPath: container.indexDirectory + "/shards")
        let host = CredentialServiceIdentifier(identifier: vector.string("parts_host"), type: .domain)
        XCTAssertTrue(try vault.identityStore.credentialIdentities(for: [host], minimumLevel: .host)
            .contains { $0.identity.recordIdentifier == record.id.hex }, "the identity bucket's part alone answers")
        XCTAssertEqual(try vault.record(withID: record.id).password, record.password, "and the ledger's part checks the record")
    }

    /// The reference writer's listing snapshot and completion table (SPEC.md §7.6, version 5)
    /// open, name the manifest's buckets, hold the reference's tables byte for byte (which Swift
    /// writes too), and answer a whole listing and a Tab alone: with every shard gone, the
    /// identities still list.
    func testReferenceListingSnapshotAnswersTheWholeListing() throws {
        let container = try copyOfContainer()
        let vault = try Vault.open(container, configuration: Fixture.configuration())
        try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
        let index = try vault.identityIndex()
        let manifest = try index.readManifest()
        let stateDirectory = vault.deviceState.listingPath.replacingOccurrences(of: "/listing", with: "")
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        for (name, type) in [("listing", FileType.identityListing), ("completion", .completionTable)] {
            let header = try index.openSnapshotHeader(vector.hex("\(name)_file"), as: type)
            XCTAssertTrue(header.isCurrent(for: manifest), name)
            XCTAssertEqual(header.chunks.map(\.count), [vector.int(name == "listing" ? "listing_rows" : "completion_lines")], name)
            XCTAssertEqual(header.chunks.map(\.id), [vector.hex("\(name)_chunk_id")], name)
            var chunk = vector.hex("\(name)_chunk")
            let plaintext = try index.openSnapshotChunk(type, &chunk, header.chunks[0])
            XCTAssertEqual(Array(chunk[plaintext]), vector.hex("\(name)_table"), "the reference's \(name) table, byte for byte")
            var damaged = vector.hex("\(name)_chunk")
            damaged[damaged.count - 1] ^= 1
            XCTAssertThrows(try index.openSnapshotChunk(type, &damaged, header.chunks[0])) { $0 is CryptoError }
            XCTAssertThrows(try index.openSnapshotHeader(vector.hex("\(name)_file"), as: type == .identityListing ? .completionTable : .identityListing)) {
                $0 is FormatError
            }
            let path = stateDirectory + "/" + name
            try Data(vector.hex("\(name)_file")).write(to: URL(fileURLWithPath: path))
            try Data(vector.hex("\(name)_chunk")).write(to: URL(fileURLWithPath: path + "-" + Hex.encode(vector.hex("\(name)_chunk_id"))))
        }
        let listingFromShards = try IdentityListing(framedBuckets: index.framedBuckets(of: manifest), usage: UsageLog(entries: [])).sortedByService()
        XCTAssertEqual(listingFromShards.tableParts(chunkLength: 1 << 20).table, vector.hex("listing_table"), "and Swift writes the same table from the shards")
        XCTAssertEqual(CompletionTable.build(listingFromShards).table, vector.hex("completion_table"), "and the same completion table")

        try FileManager.default.removeItem(atPath: container.indexDirectory + "/shards")
        let listing = try vault.identityStore.identityListing()
        XCTAssertEqual(listing.rows.filter { $0.entry == .password }.map { listing.identity($0).user }.sorted(), ["alice", "zoë", "zoë"])
        XCTAssertEqual(listing.rows.filter { $0.entry == .oneTimeCode }.count, 2)
        XCTAssertEqual(listing.rows.filter { $0.entry == .item }.map(listing.name).sorted(), ["Travel card", "Wi-Fi at home", "Zoë at home", "laptop key"],
                       "the note, the card, the identity and the SSH key, listed by their names")
        XCTAssertEqual(String(decoding: try vault.identityStore.completionCandidates(section: 0, prefix: "Wi"), as: UTF8.self), "Wi-Fi at home\n",
                       "a Tab answers from the reference's table")
        let key = try XCTUnwrap(listing.rows.first { $0.kind == .sshKey })
        XCTAssertTrue(listing.identity(key).serviceIdentifier.identifier.hasPrefix("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGC"),
                      "an SSH key's summary is its public key, readable without the vault key (SPEC.md §7.3)")
    }

    func testStandardPolicyRefusesTheCheapVectorBeforeDeriving() throws {
        XCTAssertThrows(try Vault.open(copyOfContainer())) {
            if case VaultError.kdfParametersOutOfRange = $0 { return true }
            return false
        }
    }

    func testSwiftWriterReproducesReferenceBytes() throws {
        let vaultKey = try SecureBytes(copying: vector.hex("vault_key"))
        let vaultID = try VaultID(bytes: vector.hex("vault_id")[...])
        let header = try Vault.wrap(
            vaultKey, vaultID: vaultID, password: Fixture.secret(vector.string("password")),
            kdf: KDFParameters(opsLimit: 1, memLimit: 8192), salt: vector.hex("salt"), nonce: vector.hex("header_nonce"))
        XCTAssertEqual(Hex.encode(try header.encoded()), vector.string("header"))

        let keys = try VaultKeys(vaultKey: vaultKey)
        for index in 0..<6 {  // a login of every member, a login, a note, an SSH key, a card, an identity
            let document = vector.hex("record\(index)_document")
            let record = try RecordCoding.decode(document)
            XCTAssertEqual(Hex.encode(try RecordCoding.encode(record)), Hex.encode(document), "canonical JSON of record \(index)")
            let sealed = try RecordSealing.seal(record, vaultID: vaultID, key: keys.recordKey, nonce: vector.hex("record\(index)_nonce"))
            XCTAssertEqual(Hex.encode(sealed), vector.string("record\(index)_file"), "record \(index)")
        }
    }
}

/// Vaults whose index was written by earlier builds — format 0.x (layout 1,
/// `Vectors/vault-layout1`), the first builds of format 1 (layout 2, `Vectors/vault-layout2`) and
/// builds before item entries held dates and tags (layout 3, `Vectors/vault-layout3`): read as
/// they are while nothing writes, rewritten as layout 4 by the first write or password unlock,
/// with an item entry synthesized for every record of layouts 1 and 2.
final class IndexLayoutMigrationTests: XCTestCase {
    static let olderLayouts: [(vector: String, version: UInt8)] = [("vault-layout1", 1), ("vault-layout2", 2)]

    func manifestVersionByte(_ container: GroupContainer) throws -> UInt8 {
        try Fixture.bytes(container.indexDirectory + "/manifest")[7]
    }

    func testAnOlderIndexIsReadAsItIsThenMigratedByTheFirstWrite() throws {
        for (name, version) in Self.olderLayouts {
            let vector = try VectorFile.load("\(name)/vault.vector")
            let container = try VaultVectorTests.privateCopy(of: name)
            XCTAssertEqual(try manifestVersionByte(container), version)
            let vault = try Vault.open(container, configuration: Fixture.configuration())
            try vault.unlock(vaultKey: SecureBytes(copying: vector.hex("vault_key")))  // a session: no migration on unlock
            let www = [CredentialServiceIdentifier(parsing: "https://www.example.org/")]
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: www).map(\.identity.user), ["zoë"], name)
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "example.com")], minimumLevel: .host)
                .map(\.identity.user), ["alice"], name)
            XCTAssertEqual(try vault.identityStore.identityListing().count, 3, name)
            XCTAssertTrue(vault.verify().isClean, "\(name): \(vault.verify().problems)")
            XCTAssertEqual(try manifestVersionByte(container), version, "reading changes nothing")

            try vault.add(Fixture.draft("new.example.net", user: "carol"))
            XCTAssertEqual(try manifestVersionByte(container), 4, "\(name): the first write rewrites the index as layout 4")
            let report = vault.verify()
            XCTAssertTrue(report.isClean, "\(name): every identity re-filed, every record with its item entry: \(report.problems)")
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: www).map(\.identity.user), ["zoë"])
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "example.com")], minimumLevel: .host)
                .map(\.identity.user), ["alice"])
            XCTAssertEqual(try vault.identityStore.identityListing().count, 4)
            let listing = try vault.identityStore.identityListing()
            XCTAssertTrue(listing.rows.allSatisfy { $0.modified > 1_700_000_000 }, "\(name): every row has its record's date: \(listing.rows.map(\.modified))")
            XCTAssertEqual(try vault.allRecords().count, 3, "the ledger followed the migration")
            // An old record, rewritten, takes the new form: fields as an array, history kept.
            let old = try XCTUnwrap(vault.allRecords().first { $0.user == "zoë" })
            let rewritten = try vault.updateRecord(withID: old.id) { $0.password = "new" }
            XCTAssertEqual(rewritten.fields, [RecordField(name: "pin", value: "1234")])
            XCTAssertEqual(rewritten.passwordHistory.map(\.password), [old.password])
            XCTAssertTrue(vault.verify().isClean)
        }
    }

    func testAPasswordUnlockMigratesAndALockedReaderFindsEverything() throws {
        for (name, _) in Self.olderLayouts {
            let vector = try VectorFile.load("\(name)/vault.vector")
            let container = try VaultVectorTests.privateCopy(of: name)
            let configuration = Fixture.configuration()
            let vault = try Vault.open(container, configuration: configuration)
            try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
            XCTAssertEqual(try manifestVersionByte(container), 4, name)
            let locked = try Vault.open(container, configuration: configuration)  // the store is enabled on this device now
            XCTAssertEqual(try locked.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "https://login.example.org/signin")])
                .map(\.match?.level), [.exactURL], name)
            XCTAssertTrue(vault.verify().isClean, name)
        }
    }

    func testAManifestCannotBePassedOffAsAnotherLayout() throws {
        let vector = try VectorFile.load("vault-layout1/vault.vector")
        let container = try VaultVectorTests.privateCopy(of: "vault-layout1")
        var manifest = try Fixture.bytes(container.indexDirectory + "/manifest")
        let vault = try Vault.open(container, configuration: Fixture.configuration())
        try vault.unlock(vaultKey: SecureBytes(copying: vector.hex("vault_key")))
        for relabelled: UInt8 in [2, 3, 4] {
            manifest[7] = relabelled  // the version byte is associated data: relabelling it fails authentication
            try Fixture.write(manifest, to: container.indexDirectory + "/manifest")
            XCTAssertThrows(try vault.identityStore.identityListing()) { "\($0)".contains("authentication failed") }
        }
        manifest[7] = 5
        try Fixture.write(manifest, to: container.indexDirectory + "/manifest")
        XCTAssertThrows(try vault.identityStore.identityListing()) { "\($0)".contains("unsupportedVersion(5)") }
    }

    /// Layout 3 to 4 needs every record's date and tags, so the vault key: an identity-store
    /// edit made while locked leaves layout 3 as it is (and its index whole), and the password
    /// unlock rewrites it with the details the records hold — found while locked afterwards.
    func testALayout3IndexGainsDatesAndTagsAtThePasswordUnlockNotInALockedEdit() throws {
        let vector = try VectorFile.load("vault-layout3/vault.vector")
        let container = try VaultVectorTests.privateCopy(of: "vault-layout3")
        var configuration = Fixture.configuration()
        let notices = Mutex<[String]>([])
        configuration.recoveryNotice = { notice in notices.withLock { $0.append(notice) } }
        let vault = try Vault.open(container, configuration: configuration)
        try vault.unlock(vaultKey: SecureBytes(copying: vector.hex("vault_key")))  // a session: no migration
        try vault.deviceState.enable(indexKey: vault.keys().indexKey)
        XCTAssertEqual(try vault.identityStore.identityListing().rows.map(\.modified).max(), 0, "layout 3 holds no dates")
        vault.lock()
        let zoe = vector.string("record1_id")
        try vault.identityStore.removeCredentialIdentities([PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: "example.org", type: .domain), user: "zoë", recordIdentifier: zoe)])
        XCTAssertEqual(try manifestVersionByte(container), 3, "a locked edit cannot read the records: the layout stays")

        try vault.unlock(masterPassword: Fixture.secret(vector.string("password")))
        XCTAssertEqual(try manifestVersionByte(container), 4, "the password unlock rewrites it")
        XCTAssertEqual(notices.withLock { $0 }.count, 1, "and says so, since a large vault takes seconds: \(notices.withLock { $0 })")
        XCTAssertTrue(vault.verify().isClean, "\(vault.verify().problems)")
        let locked = try Vault.open(container, configuration: configuration)
        let listing = try locked.identityStore.identityListing()
        let zoeRows = listing.rows.filter { $0.recordID.hex == zoe }
        XCTAssertFalse(zoeRows.isEmpty)
        XCTAssertEqual(Set(zoeRows.map(\.modified)), [1_770_091_506], "2026-02-03T04:05:06Z on every identity of the record")
        XCTAssertEqual(Set(zoeRows.map { listing.tags($0) }), [["work", "favorite"]], "the record's tags, in its order")
        let note = try XCTUnwrap(listing.rows.first { $0.recordID.hex == vector.string("record2_id") })
        XCTAssertEqual(listing.tags(note), ["home"])
        XCTAssertEqual(try locked.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "example.org")])
            .map(\.identity.serviceIdentifier.identifier), ["https://login.example.org/signin"], "the locked edit's removal kept")
    }
}

extension IndexLayoutMigrationTests {
    /// A reader that lists by tag or date asks first (`indexFilesItemDetails`): locked, a
    /// layout-3 index says no and stays as it is; with the vault key (a session, not a password
    /// unlock) it is rewritten then and there, and says yes.
    func testAReaderAsksWhetherTheIndexFilesTagsAndTheVaultKeyFilesThem() throws {
        let vector = try VectorFile.load("vault-layout3/vault.vector")
        let container = try VaultVectorTests.privateCopy(of: "vault-layout3")
        let vault = try Vault.open(container, configuration: Fixture.configuration())
        try vault.unlock(vaultKey: SecureBytes(copying: vector.hex("vault_key")))
        try vault.identityStore.enable()
        vault.lock()
        XCTAssertFalse(try vault.indexFilesItemDetails())
        XCTAssertEqual(try manifestVersionByte(container), 3, "locked: nothing written")
        try vault.unlock(vaultKey: SecureBytes(copying: vector.hex("vault_key")))
        XCTAssertEqual(try manifestVersionByte(container), 3, "a session's unlock migrates nothing by itself")
        XCTAssertTrue(try vault.indexFilesItemDetails())
        XCTAssertEqual(try manifestVersionByte(container), 4)
        let listing = try vault.identityStore.identityListing()
        XCTAssertEqual(listing.rows.filter { listing.carries($0, tag: Array("work".utf8)) }.map { $0.recordID.hex }.uniqued(by: ==),
                       [vector.string("record1_id")])
        XCTAssertTrue(vault.verify().isClean)
    }
}

final class VaultHeaderTests: XCTestCase {
    func header() throws -> VaultHeader {
        try VaultHeader.decode(try VectorFile.load("vault/vault.vector").hex("header"), policy: .relaxedForTesting)
    }

    func testRoundTrip() throws {
        let decoded = try header()
        XCTAssertEqual(try VaultHeader.decode(try decoded.encoded(), policy: .relaxedForTesting), decoded)
    }

    func testEverySingleByteFlipIsRejectedOrFailsToUnwrap() throws {
        let bytes = try header().encoded()
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x04
            XCTAssertThrows(try VaultHeader.decode(flipped, policy: .relaxedForTesting), "byte \(index)") { $0 is FormatError }
        }
    }

    func testTruncatedEmptyAndOversizedHeadersAreRejected() throws {
        let bytes = try header().encoded()
        for candidate in [[], Array(bytes.prefix(7)), Array(bytes.prefix(8)), Array(bytes.dropLast()), bytes + [0]] {
            XCTAssertThrows(try VaultHeader.decode(candidate, policy: .relaxedForTesting), "\(candidate.count) bytes") { $0 is FormatError }
        }
    }

    func testOtherVersionAndTypeAreRejected() throws {
        var bytes = try header().encoded()
        bytes[7] = 2
        XCTAssertThrows(try VaultHeader.decode(bytes, policy: .relaxedForTesting)) { $0 as? FormatError == .unsupportedVersion(2) }
        bytes[7] = 1
        bytes[6] = UInt8(ascii: "R")
        XCTAssertThrows(try VaultHeader.decode(bytes, policy: .relaxedForTesting)) { $0 as? FormatError == .badMagic }
    }

    /// A header asking for 512 GiB or 2^32 passes is refused by the policy check, which runs
    /// before any derivation: this test would take hours or exhaust memory otherwise.
    func testOutOfRangeKDFParametersAreRefusedBeforeDeriving() throws {
        let original = try header()
        for kdf in [
            KDFParameters(opsLimit: 3, memLimit: 512 << 30), KDFParameters(opsLimit: .max, memLimit: 256 << 20),
            KDFParameters(opsLimit: 1, memLimit: 256 << 20), KDFParameters(opsLimit: 3, memLimit: 1 << 20),
            KDFParameters(algorithm: 1, opsLimit: 3, memLimit: 256 << 20),
        ] {
            var tampered = original
            tampered.kdf = kdf
            XCTAssertThrows(try VaultHeader.decode(try tampered.encoded(), policy: .standard), "\(kdf)") {
                $0 as? FormatError == .kdfParametersOutOfRange
            }
        }
        XCTAssertTrue(KDFPolicy.standard.permits(.interactive))
        XCTAssertTrue(KDFPolicy.standard.permits(.moderate))
        XCTAssertTrue(KDFPolicy.standard.permits(.sensitive))
        XCTAssertFalse(KDFPolicy.standard.permits(KDFPolicy.testingParameters))
    }
}

final class RecordCodingTests: XCTestCase {
    func testEveryFieldRoundTrips() throws {
        let record = Record(
            id: try RecordID.random(),
            serviceIdentifiers: [
                CredentialServiceIdentifier(identifier: "https://a.example.com/login?x=1", type: .URL),
                CredentialServiceIdentifier(identifier: "example.com", type: .domain),
            ],
            user: "ünïcødé \"user\"", password: "p\u{0}w\n\t\\/é😀", notes: "multi\nline",
            fields: [RecordField(name: "q", value: "a"), RecordField(name: "pin", value: "0000", hidden: true)],
            created: Date(timeIntervalSince1970: 1_700_000_000), modified: Date(timeIntervalSince1970: 1_800_000_000),
            revision: 42, matchMode: .site, name: "Work mail", kind: .login, tags: ["work", "favorite"],
            otp: "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example",
            passwordHistory: [PasswordHistoryEntry(password: "old", replaced: Date(timeIntervalSince1970: 1_750_000_000))])
        XCTAssertEqual(try RecordCoding.decode(RecordCoding.encode(record)), record)
        for kind in ItemKind.allCases {
            var other = record
            other.kind = kind
            other.serviceIdentifiers = []
            XCTAssertEqual(try RecordCoding.decode(RecordCoding.encode(other)), other, "a \(kind) without a service")
        }
    }

    func testCardAndIdentityMembersRoundTripAndEmptyOnesAreOmitted() throws {
        var card = Record(
            id: try RecordID.random(), serviceIdentifiers: [], user: "", password: "", created: Date(timeIntervalSince1970: 0),
            modified: Date(timeIntervalSince1970: 0), revision: 1, kind: .card,
            card: CardMember(cardholder: "A", number: "4111111111111111", expiryMonth: 12, securityCode: "999"))
        XCTAssertEqual(try RecordCoding.decode(RecordCoding.encode(card)), card, "a month without a year")
        let text = String(decoding: try RecordCoding.encode(card), as: UTF8.self)
        XCTAssertTrue(text.contains(#""card":{"cardholder":"A","code":"999","expiryMonth":12,"number":"4111111111111111"}"#), text)
        var identity = card
        identity.kind = .identity
        identity.card = nil
        identity.identity = IdentityMember(givenName: "Zoë", addressLines: ["1 Main St", ""], country: "US")
        XCTAssertEqual(try RecordCoding.decode(RecordCoding.encode(identity)), identity)
        card.card = CardMember()
        XCTAssertFalse(String(decoding: try RecordCoding.encode(card), as: UTF8.self).contains("card\":"), "an empty member is left out")
        let empty = #"{"card":{},"created":"2026-01-01T00:00:00Z","id":"\#(card.id.hex)","kind":"card","modified":"2026-01-01T00:00:00Z","password":"","revision":1,"serviceIdentifiers":[],"user":""}"#
        XCTAssertNil(try RecordCoding.decode(Array(empty.utf8)).card, "an empty object is the member at its default (SPEC.md §6.2)")
        let json = String(decoding: JSONValue.object(RecordCoding.document(card, omittingDefaults: false)).canonicalBytes, as: UTF8.self)
        XCTAssertTrue(json.contains(#""identity":null"#), "show --json names every member")
    }

    func testInvalidDocumentsAreRejectedWithTheirField() throws {
        let id = try RecordID.random().hex
        var cases: [(String, String)] = [
            ("not json", "not JSON"),
            (#"{"id":"\#(id)"}"#, "missing serviceIdentifiers"),
            (#"{"id":"nothex","serviceIdentifiers":[],"user":"","password":"","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#, "id"),
            (#"{"id":"\#(id)","serviceIdentifiers":[{"identifier":"a","type":"ftp"}],"user":"","password":"","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#, "type"),
            (#"{"id":"\#(id)","serviceIdentifiers":[],"user":"","password":"","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":0}"#, "revision"),
            (#"{"id":"\#(id)","serviceIdentifiers":[],"user":5,"password":"","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#, "user"),
            (#"{"id":"\#(id)","serviceIdentifiers":[],"user":"","password":"","created":"yesterday","modified":"2026-01-01T00:00:00Z","revision":1}"#, ""),
            // Two field names that differ only in Unicode normalisation: distinct JSON names, but
            // one Swift dictionary key; refused rather than one value silently dropped.
            (#"{"id":"\#(id)","serviceIdentifiers":[],"user":"","password":"","fields":{"\u00e9":"1","e\u0301":"2"},"created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#, "fields"),
        ]
        // A card's and an identity's members (SPEC.md §6.8).
        let base = #""created":"2026-01-01T00:00:00Z","id":"\#(id)","modified":"2026-01-01T00:00:00Z","password":"","revision":1,"serviceIdentifiers":[],"user":""}"#
        for (member, kind) in [
            (#""card":{"expiryMonth":13}"#, "card"), (#""card":{"expiryMonth":0}"#, "card"), (#""card":{"expiryYear":29}"#, "card"),
            (#""card":{"expiryYear":"2029"}"#, "card"), (#""card":{"number":4111111111111111}"#, "card"), (#""card":null"#, "card"),
            (#""card":{"expiryMonth":1.5}"#, "card"), (#""card":{"number":"4111111111111111"}"#, "login"), (#""card":{"pin":"1"}"#, "identity"),
            (#""identity":{"country":"fr"}"#, "identity"), (#""identity":{"country":"FRA"}"#, "identity"),
            (#""identity":{"addressLines":["1","2","3","4","5","6","7","8","9"]}"#, "identity"), (#""identity":{"addressLines":"1 Main St"}"#, "identity"),
            (#""identity":{"givenName":null}"#, "identity"), (#""identity":{"city":"Paris"}"#, "card"),
        ] {
            cases.append((#"{\#(member),"kind":"\#(kind)",\#(base)"#, member.hasPrefix(#""card""#) ? "card" : "identity"))
        }
        for (json, expectedWord) in cases {
            XCTAssertThrows(try RecordCoding.decode(Array(json.utf8)), json) { error in
                guard case FormatError.invalidDocument(let reason) = error else { return false }
                return expectedWord.isEmpty || reason.contains(expectedWord)
            }
        }
    }

    func testUnknownMembersAreIgnored() throws {
        let id = try RecordID.random().hex
        let json = #"{"future":{"x":1},"id":"\#(id)","serviceIdentifiers":[],"user":"u","password":"p","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#
        let record = try RecordCoding.decode(Array(json.utf8))
        XCTAssertEqual(record.user, "u")
        XCTAssertEqual(record.otherMembers, ["future": ["x": 1]])
        // A rewrite keeps what a newer writer added (SPEC.md §6.2), in canonical order.
        let rewritten = String(decoding: try RecordCoding.encode(record), as: UTF8.self)
        XCTAssertTrue(rewritten.hasPrefix(#"{"created":"2026-01-01T00:00:00Z","future":{"x":1},"id":"#), rewritten)
    }

    func testDuplicateMembersAreRejected() throws {
        let id = try RecordID.random().hex
        let json = #"{"id":"\#(id)","serviceIdentifiers":[],"user":"u","password":"p","password":"q","created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","revision":1}"#
        XCTAssertThrows(try RecordCoding.decode(Array(json.utf8))) { error in
            guard case FormatError.invalidDocument(let reason) = error else { return false }
            return reason.contains("duplicate member name")
        }
    }
}
