import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// Secret Service items in the format and the index (SPEC.md §6.5, §7.3): the reference's bytes,
/// the member's rules, and searching by attribute digests while locked.
final class SecretServiceItemTests: XCTestCase {
    func testTheReferencesRecordDigestsAndBucketRoundTripByteForByte() throws {
        let file = try VectorFile.load("primitives/secret_service.vector")
        let json = Array(file.string("record_json").utf8)
        let record = try RecordCoding.decode(json)
        XCTAssertEqual(try RecordCoding.encode(record), json)
        XCTAssertEqual(record.kind, .secret)
        XCTAssertEqual(record.secretService?.creator, "/usr/bin/evolution")
        for line in file.lines where line.key == "digest" {
            let parts = line.value.split(separator: " ")
            let pair = parts[0].split(separator: "=", maxSplits: 1).map(String.init)
            XCTAssertEqual(AttributeEntry.digest(name: pair[0], value: pair[1]), String(parts[1]), line.value)
        }
        let bucket = try XCTUnwrap(Hex.decode(file.string("bucket")))
        let entries = try IndexShardCoding.decodeBucket(bucket)
        XCTAssertEqual(IndexShardCoding.encode(entries, layout: .items), bucket, "the vector's bucket is of layout 3")
        XCTAssertEqual(Vault.indexEntries(of: record).map(\.withoutDetails).sorted { BucketEntry.canonicalOrder($0, $1) }, entries,
                       "Coffer files what the reference does")
        let binary = file.string("binary_secret").split(separator: " ")
        var member = SecretServiceMember()
        XCTAssertEqual(member.password(for: try XCTUnwrap(Hex.decode(String(binary[0])))), String(binary[1]))
        XCTAssertTrue(member.isBase64)
    }

    func testTheMembersRulesAreEnforcedOnRead() throws {
        func document(kind: String, member: String) -> [UInt8] {
            Array(#"{"created":"2026-12-04T12:00:00Z","id":"00112233445566778899aabbccddeeff","kind":"\#(kind)","modified":"2026-12-04T12:00:00Z","notes":"","password":"x","revision":1,"secretService":\#(member),"serviceIdentifiers":[],"user":""}"#.utf8)
        }
        XCTAssertNoThrow(try RecordCoding.decode(document(kind: "secret", member: #"{"attributes":{},"collection":"work_2"}"#)))
        let many = (0...SecretServiceMember.maximumAttributes).map { #""a\#($0)":"v""# }.joined(separator: ",")
        for (kind, member) in [
            ("login", #"{"attributes":{},"collection":"login"}"#), ("secret", #"{"attributes":{},"collection":"Login"}"#),
            ("secret", #"{"attributes":{},"collection":""}"#), ("secret", #"{"collection":"login"}"#),
            ("secret", #"{"attributes":{"a":1},"collection":"login"}"#), ("secret", #"{"attributes":{"":"v"},"collection":"login"}"#),
            ("secret", #"{"attributes":{"\u00e9":"1","e\u0301":"2"},"collection":"login"}"#),
            ("secret", #"{"attributes":{\#(many)},"collection":"login"}"#),
            ("secret", #"{"attributes":{},"collection":"login","encoding":"hex"}"#), ("secret", "null"),
        ] {
            XCTAssertThrowsError(try RecordCoding.decode(document(kind: kind, member: member)), "\(kind) \(member)")
        }
    }

    func testSearchesByAttributeDigestsWhileLockedAndTheVerifierAgrees() throws {
        let vault = try Fixture.vault()
        try CredentialIdentityStore(vault: vault).enable()
        let mail = try vault.add([secret("Mail", ["service": "imap.example.com", "user": "alice"]),
                                  secret("Other mail", ["service": "imap.example.com", "user": "bob"], collection: "work"),
                                  secret("Chrome Safe Storage", ["application": "chrome"])])
        let locked = try Fixture.open(vault)
        let store = CredentialIdentityStore(vault: locked)
        XCTAssertEqual(try store.secretItems(matching: ["service": "imap.example.com", "user": "alice"]),
                       [SecretItemReference(recordID: mail[0].id, collection: "login")])
        XCTAssertEqual(Set(try store.secretItems(matching: ["service": "imap.example.com"]).map(\.collection)), ["login", "work"])
        XCTAssertEqual(try store.secretItems(matching: ["service": "imap.example.com", "user": "carol"]), [])
        XCTAssertEqual(try store.secretItems(matching: [:]).count, 3, "no attributes: every secret item")

        try vault.updateRecord(withID: mail[0].id) { $0.secretService?.attributes["user"] = "alice2" }
        XCTAssertEqual(try store.secretItems(matching: ["user": "alice"]), [], "an edit refiles the digests")
        XCTAssertEqual(try store.secretItems(matching: ["user": "alice2"]).map(\.recordID), [mail[0].id])
        try CredentialIdentityStore(vault: vault).removeAllCredentialIdentities()
        XCTAssertEqual(try store.secretItems(matching: ["user": "alice2"]).map(\.recordID), [mail[0].id], "not suggestions: kept")
        try vault.deleteRecord(withID: mail[0].id)
        XCTAssertEqual(try store.secretItems(matching: ["user": "alice2"]), [])
        XCTAssertTrue(vault.verify().isClean, "\(vault.verify().problems)")
        try vault.rebuildIdentityIndex()
        XCTAssertEqual(try store.secretItems(matching: ["application": "chrome"]).map(\.recordID), [mail[2].id])
    }

    func testTheJournalCarriesAttributeEntriesForRecovery() throws {
        let id = try RecordID(hex: "00112233445566778899aabbccddeeff")
        let entries: [BucketEntry] = [
            .item(ItemEntry(recordID: id, kind: .secret, listed: true, name: "Mail", user: "", service: "login")),
            .attribute(AttributeEntry(recordID: id, digest: AttributeEntry.digest(name: "user", value: "alice"), collection: "login")),
        ]
        let journal = IndexJournal(generation: 7, changes: [.init(recordID: id, oldHash: "aa", newHash: "bb", revision: 2, entries: entries)])
        XCTAssertEqual(try IndexJournal.decode(try journal.encoded()), journal)
        let text = String(decoding: try journal.encoded(), as: UTF8.self)
        XCTAssertTrue(text.contains(#""attributes":[{"collection":"login","digest":""#), text)
        XCTAssertFalse(text.contains("alice"), "digests only")
    }

    func testApprovedClientsAreANoteThePersonCanSee() throws {
        let vault = try Fixture.vault()
        XCTAssertEqual(try SecretServiceClients.approved(in: vault), [])
        try SecretServiceClients.approve("/usr/bin/python3.11", in: vault)
        try SecretServiceClients.approve("/usr/bin/python3.11", in: vault)
        try SecretServiceClients.approve("/usr/bin/secret-tool", in: vault)
        XCTAssertEqual(try SecretServiceClients.approved(in: vault), ["/usr/bin/python3.11", "/usr/bin/secret-tool"])
        // A person's own note of that name is not the list.
        try vault.add([RecordDraft(serviceIdentifiers: [], user: "", password: "", fields: [RecordField(name: "/usr/bin/evil", value: "always")],
                                   name: SecretServiceClients.itemName, kind: .note)])
        XCTAssertFalse(try SecretServiceClients.approved(in: vault).contains("/usr/bin/evil"))
        XCTAssertTrue(try SecretServiceClients.revoke("/usr/bin/python3.11", in: vault))
        XCTAssertFalse(try SecretServiceClients.revoke("/usr/bin/python3.11", in: vault))
        XCTAssertEqual(try SecretServiceClients.approved(in: vault), ["/usr/bin/secret-tool"])
    }

    private func secret(_ label: String, _ attributes: [String: String], collection: String = "login") -> RecordDraft {
        RecordDraft(serviceIdentifiers: [], user: "", password: label + " secret", name: label, kind: .secret,
                    secretService: SecretServiceMember(collection: collection, attributes: attributes))
    }
}
