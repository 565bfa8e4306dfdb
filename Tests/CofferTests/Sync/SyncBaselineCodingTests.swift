import Coffer
@testable import CofferFormat
@testable import CofferStore
import XCTest

/// The device's sync baseline file (SPEC.md §7.6): its bytes, and that anything but a whole
/// baseline is no baseline (the sync then stages everything).
final class SyncBaselineCodingTests: XCTestCase {
    func baseline() throws -> SyncBaseline {
        var directories = [SyncBaseline.DirectoryStamp](repeating: .absent, count: SyncBaseline.directoryCount)
        directories[0] = .present(inode: 7, modified: 1_800_000_000_123_456_789, changed: 1_800_000_001_000_000_000)
        directories[300] = .unsettled
        var ledger = [ShardID?](repeating: nil, count: SyncBaseline.ledgerCount)
        ledger[1] = try ShardID(hex: "00112233445566778899aabbccddeeff")
        return SyncBaseline(
            tree: String(repeating: "ab", count: 20), index: [42, 8_029, 1_800_000_002_000_000_000], ledger: ledger,
            directories: directories, pending: ["records/01/0123456789abcdef0123456789abcdef", "vault.seal"])
    }

    func testTheBytesAreTheOnesTheSpecificationDescribes() throws {
        let bytes = try baseline().encoded()
        let header = Array("coffer sync baseline 1\n".utf8) + Array(String(repeating: "ab", count: 20).utf8) + [0x0A]
        XCTAssertEqual(Array(bytes.prefix(header.count)), header)
        var offset = header.count
        XCTAssertEqual(Array(bytes[offset..<offset + 8]), [42, 0, 0, 0, 0, 0, 0, 0], "the index file's inode, u64 LE")
        offset += 24 + 16  // the index stamp, then slot 256's (empty) shard id
        XCTAssertEqual(Hex.encode(bytes[offset..<offset + 16]), "00112233445566778899aabbccddeeff", "slot 257's shard")
        offset += 255 * 16
        XCTAssertEqual(bytes[offset], 1, "records/00 present")
        XCTAssertEqual(Array(bytes[offset + 1..<offset + 9]), [7, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(bytes[offset + 300 * 25], 2, "tombstones/2c unsettled")
        XCTAssertEqual(bytes[offset + 301 * 25], 0, "absent")
        offset += 768 * 25
        XCTAssertEqual(Array(bytes[offset..<offset + 4]), [2, 0, 0, 0], "two pending paths")
        XCTAssertEqual(Array(bytes[offset + 4..<offset + 6]), [43, 0], "the first path is 43 bytes")
        XCTAssertEqual(bytes.count, offset + 4 + 2 + 43 + 2 + 10)
    }

    func testItReadsBackAndAnythingElseIsNoBaseline() throws {
        let original = try baseline()
        let bytes = original.encoded()
        let read = try XCTUnwrap(SyncBaseline.decode(bytes))
        XCTAssertEqual(read.tree, original.tree)
        XCTAssertEqual(read.index, original.index)
        XCTAssertEqual(read.ledger, original.ledger)
        XCTAssertEqual(read.directories, original.directories)
        XCTAssertEqual(read.pending, original.pending)
        XCTAssertNil(SyncBaseline.decode(Array(bytes.dropLast())), "torn")
        XCTAssertNil(SyncBaseline.decode(bytes + [0]), "trailing bytes")
        var kind = bytes
        kind[Array("coffer sync baseline 1\n".utf8).count + 41 + 24 + 256 * 16] = 3
        XCTAssertNil(SyncBaseline.decode(kind), "an unknown directory kind")
        var foreign = original
        foreign.pending = ["records/../../etc/passwd"]
        XCTAssertNil(SyncBaseline.decode(foreign.encoded()), "a pending path that is no shared path")
        var upper = original
        upper.tree = String(repeating: "AB", count: 20)
        XCTAssertNil(SyncBaseline.decode(upper.encoded()), "a tree that is not lower-case hex")
        XCTAssertNil(SyncBaseline.decode(Array("coffer sync baseline 2\n".utf8) + bytes.dropFirst(23)), "another layout")
    }
}
