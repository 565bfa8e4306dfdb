import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// Promise 2 at the record level: every modification of a record file is detected.
final class TamperTests: XCTestCase {
    func isCorrupt(_ error: Error) -> Bool {
        if case VaultError.corrupt = error { return true }
        return false
    }

    func testEverySingleByteFlipOfARecordIsRejected() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let path = vault.container.recordPath(record.id)
        let original = try Fixture.bytes(path)
        for index in original.indices {
            var flipped = original
            flipped[index] ^= 0x20
            try Fixture.write(flipped, to: path)
            XCTAssertThrows(try vault.record(withID: record.id), "byte \(index)") { isCorrupt($0) }
        }
        try Fixture.write(original, to: path)
        XCTAssertEqual(try vault.record(withID: record.id), record)
    }

    func testTruncatedEmptyAndExtendedRecordsAreRejected() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let path = vault.container.recordPath(record.id)
        let original = try Fixture.bytes(path)
        for candidate in [[], Array(original.prefix(8)), Array(original.prefix(40)), Array(original.dropLast()),
                          Array(original.dropLast(512)), original + [UInt8](repeating: 0, count: 512)] {
            try Fixture.write(candidate, to: path)
            XCTAssertThrows(try vault.record(withID: record.id), "\(candidate.count) bytes") { isCorrupt($0) }
        }
    }

    func testSwappedRecordsAreRejected() throws {
        let vault = try Fixture.vault()
        let a = try vault.add(Fixture.draft("a.example"))
        let b = try vault.add(Fixture.draft("b.example"))
        let (pathA, pathB) = (vault.container.recordPath(a.id), vault.container.recordPath(b.id))
        let (bytesA, bytesB) = (try Fixture.bytes(pathA), try Fixture.bytes(pathB))
        try Fixture.write(bytesB, to: pathA)
        try Fixture.write(bytesA, to: pathB)
        XCTAssertThrows(try vault.record(withID: a.id)) { isCorrupt($0) }
        XCTAssertThrows(try vault.record(withID: b.id)) { isCorrupt($0) }
    }

    func testRecordCopiedFromAnotherVaultIsRejected() throws {
        let vault = try Fixture.vault()
        let other = try Fixture.vault()
        let foreign = try other.add(Fixture.draft("foreign.example"))
        let destination = vault.container.recordPath(foreign.id)
        try FileManager.default.createDirectory(atPath: vault.container.recordsDirectory + "/" + foreign.id.hex.prefix(2), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Fixture.write(try Fixture.bytes(other.container.recordPath(foreign.id)), to: destination)
        XCTAssertThrows(try vault.record(withID: foreign.id)) { isCorrupt($0) }
    }

    func testRecordThatIsASymlinkIsRefused() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let path = vault.container.recordPath(record.id)
        let elsewhere = vault.container.path + "/../outside"
        try FileManager.default.moveItem(atPath: path, toPath: elsewhere)
        XCTAssertEqual(symlink(elsewhere, path), 0)
        XCTAssertThrows(try vault.record(withID: record.id)) {
            if case VaultError.storage(.symbolicLink) = $0 { return true }
            return false
        }
    }

    func testHugeFileIsRefusedWithoutReadingIt() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let path = vault.container.recordPath(record.id)
        // A sparse 1 GiB file: refusing it must not allocate or read a gigabyte.
        let fd = open(path, O_WRONLY | O_TRUNC)
        XCTAssertEqual(ftruncate(fd, 1 << 30), 0)
        close(fd)
        XCTAssertThrows(try vault.record(withID: record.id)) {
            if case VaultError.storage(.fileTooLarge) = $0 { return true }
            return false
        }
    }
}
