@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import XCTest

final class SearchMatchingTests: XCTestCase {
    /// The byte-level ASCII path and the Unicode fallback agree with `lowercased().contains`.
    func testCaseInsensitiveContainsAgreesWithLowercased() {
        let haystacks = ["GitHub.com", "mail.EXAMPLE.org", "", "a", "Ünïcødé@Exämple.com", "straße", "ab", "xAbAbAc"]
        let needles = ["github", "example", "a", "ä", "exämple", "ss", "abac", "xabababac", "z", "ünï"]
        for var haystack in haystacks {
            for needle in needles {
                XCTAssertEqual(haystack.withUTF8 { $0.containsLowercased(needle) }, haystack.lowercased().contains(needle), "\(haystack) / \(needle)")
            }
            XCTAssertTrue(haystack.withUTF8 { $0.containsLowercased("") })
        }
    }
}
