import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class IdentifierTests: XCTestCase {
    func testCanonicalHexRoundTrips() throws {
        let id = try RecordID.random()
        XCTAssertEqual(try RecordID(hex: id.hex), id)
        XCTAssertEqual(id.hex.count, 32)
    }

    func testRejectsEverythingButCanonicalHex() {
        let valid = String(repeating: "ab", count: 16)
        for bad in [
            "", "..", "../../etc/passwd", "a/b", "ab\0cd", valid.uppercased(), String(valid.dropLast()),
            valid + "00", String(repeating: "x", count: 4096), "0x" + String(valid.dropFirst(2)), " " + String(valid.dropFirst()),
        ] {
            XCTAssertThrows(try RecordID(hex: bad), bad) { $0 as? FormatError == .invalidIdentifier }
            XCTAssertThrows(try VaultID(hex: bad), bad) { $0 as? FormatError == .invalidIdentifier }
        }
    }

    func testGroupIdentifiers() throws {
        for good in ["group.coffer.default", "group.com.example.app", "A-b_c.9"] {
            XCTAssertNoThrow(try GroupContainer.validate(groupIdentifier: good), good)
        }
        for bad in ["", "..", "a..b", ".a", "a.", "a/b", "../x", "a\0b", "a b", "é.example", String(repeating: "a", count: 4096)] {
            XCTAssertThrows(try GroupContainer.validate(groupIdentifier: bad), bad) {
                if case StorageError.invalidGroupIdentifier = $0 { return true }
                return false
            }
        }
    }

    func testGroupContainerResolvesUnderXDGDataHome() throws {
        let container = try GroupContainer(groupIdentifier: "group.a.b", environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"])
        XCTAssertEqual(container.path, "/data/coffer/group-containers/group.a.b")
        let fallback = try GroupContainer(groupIdentifier: "group.a.b", environment: ["HOME": "/home/u"])
        XCTAssertEqual(fallback.path, "/home/u/.local/share/coffer/group-containers/group.a.b")
        let relativeXDG = try GroupContainer(groupIdentifier: "g", environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"])
        XCTAssertEqual(relativeXDG.path, "/h/.local/share/coffer/group-containers/g", "XDG requires absolute paths")
    }

    /// Identifiers are stored as two words; their order and bytes must be the bytes' own.
    func testWordsKeepBytesAndOrder() throws {
        let ids = try (0..<200).map { _ in try RecordID.random() }
        for id in ids {
            XCTAssertEqual(try RecordID(bytes: id.bytes), id)
            XCTAssertEqual(try RecordID(hex: id.hex), id)
            XCTAssertEqual(id.firstByte, id.bytes[0])
        }
        XCTAssertEqual(ids.sorted().map(\.bytes), ids.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) })
        let edge = try RecordID(hex: "00000000000000ff0100000000000000")
        XCTAssertEqual(edge.bytes, [0, 0, 0, 0, 0, 0, 0, 0xff, 1, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertLessThan(edge, try RecordID(hex: "0000000000000100000000000000000f"))
    }
}
