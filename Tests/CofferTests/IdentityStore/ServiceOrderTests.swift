import Coffer
@testable import CofferProvider
import XCTest

/// Service order (`sortedByService`, the order of `coffer list` and of the listing table) is
/// byte order of the first column, then the user, then the record id — whatever shortcut the
/// sort takes (it compares the first sixteen bytes as integers before any `memcmp`).
final class ServiceOrderTests: XCTestCase {
    func testTheSortAgreesWithPlainByteOrderOnSharedPrefixesOfEveryLength() throws {
        // Few letters, so that many names share 0 to 20 leading bytes, and a NUL, which the
        // shortcut pads shorter names with.
        let letters: [UInt8] = [0x00, 0x2E, 0x61, 0x62, 0x7A, 0xC3, 0xA9]
        var generator = SystemRandomNumberGenerator()
        var identities: [PasswordCredentialIdentity] = []
        for index in 0..<4000 {
            let length = Int.random(in: 0...20, using: &generator)
            let name = String(decoding: (0..<length).map { _ in letters.randomElement(using: &generator)! }, as: UTF8.self)
            let isURL = index % 3 == 0
            let identifier = isURL ? "https://" + name + (index % 2 == 0 ? "/login" : "") : name
            identities.append(PasswordCredentialIdentity(
                serviceIdentifier: CredentialServiceIdentifier(identifier: identifier, type: isURL ? .URL : .domain),
                user: ["", "a", "ab", "b"].randomElement(using: &generator)!,
                recordIdentifier: String(format: "%032x", index)))
        }
        let sorted = IdentityListing(identities).sortedByService()
        let expected = sorted.withUnsafeText { text in
            sorted.rows.sorted { a, b in
                IdentityListing.servicePrecedes(a, in: text, b, in: text)  // memcmp on every comparison
            }.map(\.recordID)
        }
        XCTAssertEqual(sorted.rows.map(\.recordID), expected)
        let firstColumns = sorted.withUnsafeText { text in
            sorted.rows.map { Array(text[IdentityListing.firstColumn(of: $0, in: text)]) }
        }
        for (before, after) in zip(firstColumns, firstColumns.dropFirst()) {
            XCTAssertFalse(after.lexicographicallyPrecedes(before), "\(before) is listed before \(after)")
        }
    }
}
