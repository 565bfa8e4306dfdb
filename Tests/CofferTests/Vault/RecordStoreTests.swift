import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class RecordStoreTests: XCTestCase {
    func testAddGetUpdateDeleteEnumerate() throws {
        let vault = try Fixture.vault()
        let first = try vault.add(Fixture.draft("example.com", user: "alice"))
        let second = try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: "https://github.com/login", type: .URL)],
            user: "bob", password: "pw2", notes: "note", fields: [RecordField(name: "otp", value: "seed")]))
        XCTAssertEqual(first.revision, 1)
        XCTAssertEqual(try vault.record(withID: second.id), second)
        XCTAssertEqual(Set(try vault.allRecords().map(\.id)), [first.id, second.id])

        let updated = try vault.updateRecord(withID: first.id) { record in
            record.password = "changed"
            record.revision = 999  // ignored: the vault owns revisions
            record.created = .distantPast  // ignored too
        }
        XCTAssertEqual(updated.revision, 2)
        XCTAssertEqual(updated.created, first.created)
        XCTAssertEqual(try Fixture.reopen(vault).record(withID: first.id).password, "changed")

        try vault.deleteRecord(withID: first.id)
        XCTAssertThrows(try vault.record(withID: first.id)) { $0 as? VaultError == .recordNotFound(first.id) }
        XCTAssertThrows(try vault.deleteRecord(withID: first.id)) { $0 as? VaultError == .recordNotFound(first.id) }
        XCTAssertEqual(try vault.recordIDs(), [second.id])
    }

    func testRecordsAreShardedByTheFirstByteOfTheirID() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let shard = String(record.id.hex.prefix(2))
        XCTAssertTrue(FileManager.default.fileExists(atPath: vault.container.recordsDirectory + "/" + shard + "/" + record.id.hex))
    }

    /// Many drafts at once, past one batch of sealing: every id comes back in the drafts' order,
    /// with its record as `add` returns it; a bad draft anywhere, even the last, writes nothing.
    func testManyDraftsAreAddedInOrderAcrossBatches() throws {
        let vault = try Fixture.vault()
        let drafts = (0..<4100).map { Fixture.draft("site\($0).example", user: "user\($0)") }
        var reported: [Int] = []
        let ids = try vault.addReturningIdentifiers(drafts.lazy.map { $0 }, progress: { done, _ in reported.append(done) })
        XCTAssertEqual(ids.count, 4100)
        XCTAssertEqual(Set(ids).count, 4100)
        XCTAssertEqual(reported, [0, 4096, 4100], "progress after each batch")
        for position in [0, 4095, 4096, 4099] {
            XCTAssertEqual(try vault.record(withID: ids[position]).user, "user\(position)")
        }
        let records = try vault.add(drafts.prefix(3))
        XCTAssertEqual(records.map(\.user), ["user0", "user1", "user2"])
        XCTAssertEqual(try vault.record(withID: records[2].id), records[2])
        let bad = drafts.prefix(4099) + [Fixture.draft("a\0b")]
        XCTAssertThrows(try vault.addReturningIdentifiers(bad)) { if case VaultError.invalidInput = $0 { return true }; return false }
        XCTAssertEqual(try vault.recordIDs().count, 4103, "nothing of the refused batch written")
    }

    func testInvalidDraftsAreRefusedAndWriteNothing() throws {
        let vault = try Fixture.vault()
        for draft in [
            RecordDraft(serviceIdentifiers: [], user: "u", password: "p", tags: ["a", "a"]),
            Fixture.draft(""), Fixture.draft("a\0b"), Fixture.draft(String(repeating: "x", count: 4096)),
            Fixture.draft(password: String(repeating: "p", count: 2 << 20)),
        ] {
            XCTAssertThrows(try vault.add(draft)) { if case VaultError.invalidInput = $0 { return true }; return false }
        }
        XCTAssertEqual(try vault.recordIDs(), [])
    }

    func testNoSecretOrNameAppearsInTheContainerBytes() throws {
        let vault = try Fixture.vault()
        try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: "secretbank.example", type: .domain)],
            user: "uniqueuser42", password: "Tr0ub4dor&3xyzzy", notes: "mynotesmarker"))
        try vault.add(Fixture.draft("other-service.example", user: "seconduser77", password: "anotherpassword99"))
        for file in Fixture.allFiles(under: vault.container.path) {
            let bytes = try Fixture.bytes(file)
            let text = String(decoding: bytes, as: UTF8.self)
            for needle in ["secretbank", "uniqueuser42", "Tr0ub4dor", "mynotesmarker", "other-service", "seconduser77", "anotherpassword99", "2026"] {
                XCTAssertFalse(text.contains(needle), "\(needle) found in \(file)")
                XCTAssertFalse(file.contains(needle), "\(needle) in a file name")
            }
        }
    }

    func testPlaintextLengthIsHiddenByPadding() throws {
        let vault = try Fixture.vault()
        let short = try vault.add(Fixture.draft(password: "a"))
        let long = try vault.add(Fixture.draft(password: String(repeating: "b", count: 200)))
        XCTAssertEqual(try Fixture.bytes(vault.container.recordPath(short.id)).count,
                       try Fixture.bytes(vault.container.recordPath(long.id)).count)
    }

    func testFilesAre0600AndDirectories0700() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft())
        let enumerator = FileManager.default.enumerator(atPath: vault.container.path)!
        var checked = 0
        for case let relative as String in enumerator {
            var info = stat()
            XCTAssertEqual(lstat(vault.container.path + "/" + relative, &info), 0)
            let expected: mode_t = (info.st_mode & S_IFMT) == S_IFDIR ? 0o700 : 0o600
            XCTAssertEqual(info.st_mode & 0o777, expected, relative)
            checked += 1
        }
        var info = stat()
        lstat(vault.container.path, &info)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertGreaterThan(checked, 5)
    }
}
