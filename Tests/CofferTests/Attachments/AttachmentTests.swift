import Coffer
@testable import CofferStore
@testable import CofferFormat
@testable import CofferCrypto
import Foundation
import XCTest

/// Attachments (SPEC.md §6.7): byte-for-byte round trips at the chunk boundaries, sizes padded to
/// buckets, every kind of damage to a file refused naming its item, and a write cut short at
/// any point leaving the item as it was before or after.
final class AttachmentTests: XCTestCase {
    /// `count` bytes that differ from position to position (and from run to run).
    static func content(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let base = UInt8.random(in: 0...255, using: &generator)
        return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ Int(base) &+ $0 >> 8) }
    }

    /// A reader over `bytes` in uneven pieces, as a pipe delivers them.
    static func reader(_ bytes: [UInt8]) -> (UnsafeMutableRawBufferPointer) throws -> Int {
        var offset = 0
        var piece = 1
        return { buffer in
            piece = piece % 70_001 + 12_345
            let count = min(buffer.count, bytes.count - offset, piece)
            buffer.copyBytes(from: bytes[offset..<offset + count])
            offset += count
            return count
        }
    }

    func read(_ vault: Vault, _ name: String, of id: RecordID) throws -> [UInt8] {
        var out: [UInt8] = []
        try vault.readAttachment(named: name, of: id) { out += $0 }
        return out
    }

    func path(of attachment: Attachment, in vault: Vault) -> String { vault.container.attachmentPath(attachment.id) }

    func testFilesOfEverySizeComeBackByteForByte() throws {
        let vault = try Fixture.vault()
        let id = try vault.add(Fixture.draft()).id
        for size in [0, 1, 4095, 4097, 65_535, 65_536, 65_537, 3 * 65_536 + 5, 1 << 20] {
            let bytes = Self.content(size)
            let attachment = try vault.attach(name: "file-\(size)", to: id, read: Self.reader(bytes))
            XCTAssertEqual(attachment.size, UInt64(size))
            XCTAssertEqual(attachment.digest, try BLAKE2b.hash(bytes), "the digest is BLAKE2b-256 of the content")
            XCTAssertEqual(try read(Fixture.reopen(vault), "file-\(size)", of: id), bytes, "size \(size)")
            let onDisk = try Fixture.bytes(path(of: attachment, in: vault))
            XCTAssertEqual(UInt64(onDisk.count), AttachmentStream.fileLength(UInt64(size)))
            XCTAssertEqual(Array(onDisk.prefix(8)), Array("COFFERA".utf8) + [1])
        }
        XCTAssertEqual(try vault.record(withID: id).attachments.count, 9)
    }

    func testSizesArePaddedToBuckets() {
        XCTAssertEqual(AttachmentStream.paddedLength(0), 4096)
        XCTAssertEqual(AttachmentStream.paddedLength(4096), 4096)
        XCTAssertEqual(AttachmentStream.paddedLength(5000), 5120)
        XCTAssertEqual(AttachmentStream.paddedLength(70_000), 71_680)
        XCTAssertEqual(AttachmentStream.paddedLength(1_000_000), 1_015_808)
        for size in stride(from: UInt64(4097), to: 50_000_000, by: 999_983) {
            let padded = AttachmentStream.paddedLength(size)
            XCTAssertGreaterThanOrEqual(padded, size)
            XCTAssertLessThanOrEqual(Double(padded - size) / Double(size), 0.12, "Padmé wastes at most 12%")
        }
        // Many sizes, few buckets: 1,000 sizes around 1 MB share a handful of file lengths.
        let lengths = Set((0..<1000).map { AttachmentStream.fileLength(1_000_000 + UInt64($0) * 37) })
        XCTAssertLessThanOrEqual(lengths.count, 3)
    }

    func checkInPieces(_ bytes: [UInt8], _ attachment: Attachment, pieceSize: Int = 10_007) throws {
        let checker = AttachmentChecker(attachment)
        for start in stride(from: 0, to: bytes.count, by: pieceSize) {
            try bytes[start..<min(start + pieceSize, bytes.count)].withUnsafeBytes { try checker.append($0) }
        }
        try checker.finish()
    }

    func testEveryKindOfDamageIsRefusedNamingTheItem() throws {
        let vault = try Fixture.vault()
        let id = try vault.add(Fixture.draft()).id
        let bytes = Self.content(3 * 65_536 + 100)
        let attachment = try vault.attach(name: "codes.pdf", to: id, read: Self.reader(bytes))
        let other = try vault.attach(name: "other.bin", to: id, read: Self.reader(Self.content(3 * 65_536 + 100, seed: 9)))
        let file = path(of: attachment, in: vault)
        let original = try Fixture.bytes(file)
        let header = AttachmentStream.headerLength, chunk = AttachmentStream.sealedChunkLength
        func chunks(_ bytes: [UInt8]) -> [[UInt8]] {
            stride(from: header, to: bytes.count, by: chunk).map { Array(bytes[$0..<min($0 + chunk, bytes.count)]) }
        }
        let parts = chunks(original)
        XCTAssertEqual(parts.count, 4)
        let damaged: [(String, [UInt8])] = [
            ("two chunks swapped", Array(original[..<header]) + parts[1] + parts[0] + parts[2] + parts[3]),
            ("a chunk dropped", Array(original[..<header]) + parts[0] + parts[2] + parts[3]),
            ("a chunk repeated", Array(original[..<header]) + parts[0] + parts[0] + parts[2] + parts[3]),
            ("cut short", Array(original.dropLast(17))),
            ("the last chunk gone", Array(original[..<header]) + parts[0] + parts[1] + parts[2]),
            ("a byte appended", original + [0]),
            ("a bit flipped", { var b = original; b[header + 70_000] ^= 1; return b }()),
            ("the header changed", { var b = original; b[10] ^= 1; return b }()),
            ("another attachment's file", try Fixture.bytes(path(of: other, in: vault))),
        ]
        for (what, bytes) in damaged {
            try Fixture.write(bytes, to: file)
            XCTAssertThrowsError(try read(vault, "codes.pdf", of: id), what) { error in
                guard case VaultError.corrupt(let path, let reason) = error else { return XCTFail("\(what): \(error)") }
                XCTAssertEqual(path, file)
                XCTAssertTrue(reason.contains("'codes.pdf' of 'example.com'"), "\(what): \(reason)")
            }
        }
        // The same damage, fed in uneven pieces to the check a sync streams a fetched file through.
        for (what, bytes) in damaged {
            XCTAssertThrowsError(try checkInPieces(bytes, attachment), what) { XCTAssertTrue($0 is AttachmentOpener.Failure, "\(what): \($0)") }
        }
        for size in [1, 7, 4096, 65_536, 100_000] {
            XCTAssertNoThrow(try checkInPieces(original, attachment, pieceSize: size), "the whole file in pieces of \(size)")
        }
        try FileManager.default.removeItem(atPath: file)
        XCTAssertThrowsError(try read(vault, "codes.pdf", of: id)) { XCTAssertTrue("\($0)".contains("is missing"), "\($0)") }
        try Fixture.write(original, to: file)
        XCTAssertEqual(try read(vault, "codes.pdf", of: id), bytes, "restored, it reads again")
    }

    func testRemovingAnAttachmentOrItsItemRemovesItsFileAndAnEditKeepsThem() throws {
        let vault = try Fixture.vault()
        let id = try vault.add(Fixture.draft()).id
        let kept = try vault.attach(name: "a.txt", mediaType: "text/plain", to: id, read: Self.reader(Array("alpha".utf8)))
        let removed = try vault.attach(name: "b.txt", to: id, read: Self.reader(Array("beta".utf8)))
        XCTAssertThrowsError(try vault.attach(name: "a.txt", to: id, read: Self.reader([1]))) { XCTAssertTrue("\($0)".contains("already has an attachment")) }
        try vault.updateRecord(withID: id) { $0.password = "changed" }
        XCTAssertEqual(try vault.record(withID: id).attachments.map(\.name), ["a.txt", "b.txt"], "an edit keeps them")
        XCTAssertEqual(try vault.record(withID: id).attachment(named: "a.txt")?.mediaType, "text/plain")

        try vault.removeAttachment(named: "b.txt", of: id)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(of: removed, in: vault)))
        XCTAssertEqual(try vault.record(withID: id).attachments.map(\.name), ["a.txt"])
        XCTAssertThrowsError(try vault.removeAttachment(named: "b.txt", of: id)) { XCTAssertEqual($0 as? VaultError, .attachmentNotFound(item: "example.com", name: "b.txt")) }

        try vault.deleteRecord(withID: id)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path(of: kept, in: vault)), "the item's files leave with it")
        XCTAssertEqual(Fixture.allFiles(under: vault.container.path + "/incoming"), [])
    }

    func testAFileOverTheLimitOrABadNameStoresNothing() throws {
        let vault = try Fixture.vault()
        let id = try vault.add(Fixture.draft()).id
        XCTAssertThrowsError(try vault.attach(name: "big", to: id, limit: 100_000, read: Self.reader(Self.content(100_001)))) { error in
            XCTAssertTrue("\(error)".contains("larger than the limit of 98 KiB"), "\(error)")
        }
        for name in ["", "a/b", "..", "tab\there", String(repeating: "x", count: 256)] {
            XCTAssertThrowsError(try vault.attach(name: name, to: id, read: Self.reader([1])), name)
        }
        XCTAssertEqual(try vault.record(withID: id).attachments, [])
        XCTAssertEqual(Fixture.allFiles(under: vault.container.path + "/incoming") + Fixture.allFiles(under: vault.container.path + "/attachments"), [])
        XCTAssertEqual(try vault.record(withID: id).revision, 1, "the item is unchanged")
    }

    /// What a crash leaves at each step is settled by the next write: a partial file whose
    /// writer is gone goes; a file in passage goes where its record says.
    func testWhatACrashLeavesInIncomingIsSettledByTheNextWrite() throws {
        let vault = try Fixture.vault()
        let id = try vault.add(Fixture.draft()).id
        let attachment = try vault.attach(name: "keep.bin", to: id, read: Self.reader(Self.content(10_000)))
        let incoming = vault.container.path + "/incoming/"
        // A writer killed while streaming: its partial file, no lock held any more.
        try Fixture.write([1, 2, 3], to: incoming + Vault.incomingName(id, try AttachmentID.random()) + ".partial")
        // Killed after the record was committed, before the file moved into place.
        let stored = path(of: attachment, in: vault)
        try FileManager.default.moveItem(atPath: stored, toPath: incoming + Vault.incomingName(id, attachment.id))
        // Killed after the file moved aside for a removal whose record was never committed… and
        // one whose record was: no record names it.
        let orphan = try AttachmentID.random()
        try Fixture.write([9], to: incoming + Vault.incomingName(id, orphan))

        _ = try vault.add(Fixture.draft("other.example"))  // any write settles them
        XCTAssertEqual(Fixture.allFiles(under: incoming), [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: stored), "named by its record: back in place")
        XCTAssertEqual(try read(vault, "keep.bin", of: id).count, 10_000)
    }
}
