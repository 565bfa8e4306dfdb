import CofferSupport
import XCTest

/// Byte comparison eight bytes at a time must order exactly as byte-by-byte comparison does:
/// the listing, completion and canonical JSON member order depend on it.
final class ByteComparisonTests: XCTestCase {
    func testOrderAndEqualityMatchByteByByteComparison() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            // Short alphabets and shared prefixes, so that ties past the first word are common.
            let prefix = (0..<Int.random(in: 0..<20, using: &generator)).map { _ in UInt8.random(in: 0x61...0x62, using: &generator) }
            let a = prefix + (0..<Int.random(in: 0..<12, using: &generator)).map { _ in UInt8.random(in: 0x61...0x62, using: &generator) }
            let b = prefix + (0..<Int.random(in: 0..<12, using: &generator)).map { _ in UInt8.random(in: 0x61...0xFF, using: &generator) }
            let expected = a.lexicographicallyPrecedes(b) ? -1 : b.lexicographicallyPrecedes(a) ? 1 : 0
            let order = a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.lexicographicOrder(b) } }
            XCTAssertEqual(order.signum(), expected, "\(a) vs \(b)")
            XCTAssertEqual(a.hasSameBytes(as: b), a == b)
            XCTAssertTrue(a.hasSameBytes(as: a))
        }
    }

    func testAHighByteOrdersAfterALowOneInEveryPositionOfAWord() {
        for position in 0..<17 {
            var low = [UInt8](repeating: 0x41, count: 17), high = low
            low[position] = 0x7F
            high[position] = 0x80
            XCTAssertLessThan(low.withUnsafeBytes { a in high.withUnsafeBytes { b in a.lexicographicOrder(b) } }, 0, "position \(position)")
        }
    }
}
