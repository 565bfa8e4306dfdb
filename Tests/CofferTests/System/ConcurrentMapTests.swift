import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class ConcurrentMapTests: XCTestCase {
    struct Failure: Error, Equatable { let index: Int }

    func testResultsKeepTheirOrder() throws {
        XCTAssertEqual(try concurrentMap(1_001) { $0 * $0 }, (0..<1_001).map { $0 * $0 })
        XCTAssertEqual(try concurrentMap(0) { $0 }, [])
        XCTAssertEqual(try concurrentMap(1) { $0 + 7 }, [7])
    }

    /// Every index runs even when some fail, and the error reported is the lowest index's.
    func testTheFirstFailureByIndexIsThrown() {
        XCTAssertThrows(try concurrentMap(500) { index -> Int in
            if index == 17 || index == 400 { throw Failure(index: index) }
            return index
        }) { ($0 as? Failure) == Failure(index: 17) }
    }
}
