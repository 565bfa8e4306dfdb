@testable import CofferFormat
@testable import CofferModel
import XCTest

/// The bytes SPEC.md §7.3 gives item kinds and match modes, spelled out as switches (a search of
/// `allCases` built an array per call): each round-trips, the kinds in declaration order, and no
/// other byte reads as one.
final class IndexByteTests: XCTestCase {
    func testKindAndModeBytesRoundTripAndNothingElseReads() {
        XCTAssertEqual(ItemKind.allCases.map(\.indexByte), Array(0..<UInt8(ItemKind.allCases.count)))
        XCTAssertEqual(MatchMode.allCases.map(\.indexByte).sorted(), [0, 1, 2, 3])
        XCTAssertEqual(MatchMode.host.indexByte, 0, "a zeroed field is the default")
        for byte in UInt8.min...UInt8.max {
            XCTAssertEqual(ItemKind(indexByte: byte)?.indexByte, byte < ItemKind.allCases.count ? byte : nil)
            XCTAssertEqual(MatchMode(indexByte: byte)?.indexByte, byte < 4 ? byte : nil)
        }
    }
}
