@testable import CofferBrowserHost
@testable import CofferModel
@testable import CofferProvider
import XCTest

/// The vault page's table lists each item once: a login's several identity rows and its
/// one-time-code row are one item, and records whose ids share their top 20 bits (where the
/// table looks twice) are still each listed.
final class VaultPageTableTests: XCTestCase {
    func testEachItemIsOneRowWhateverItsIdsShare() {
        let text = Array("a.exampleb.exampleuserNote".utf8)
        func row(_ high: UInt64, _ entry: IdentityListing.Entry, site: (Int32, Int32), name: (Int32, Int32) = (0, 0)) -> IdentityListing.Row {
            IdentityListing.Row(
                recordID: RecordID(words: IdentifierWords(high: high, low: 7)), entry: entry, kind: entry == .item ? .note : .login, rank: 0,
                lastUsed: 0, type: .URL, mode: .host, level: nil, requestIndex: 0, identifierBounds: site, userBounds: (18, 22),
                nameBounds: name)
        }
        let shared: UInt64 = 0xABCDE << 44
        let listing = IdentityListing(text: text, rows: [
            row(shared | 1, .password, site: (0, 9)),        // a login with two sites and a code…
            row(shared | 2, .password, site: (0, 9)),        // …another record of the same top bits
            row(shared | 1, .password, site: (9, 18)),
            row(shared | 1, .oneTimeCode, site: (0, 9)),
            row(0x12345 << 44, .password, site: (9, 18)),
            row(shared | 3, .item, site: (0, 0), name: (22, 26)),
        ], order: .service)
        let table = VaultPageTable(listing, token: nil)
        XCTAssertEqual(table.members, [0, 1, 4, 5])
        XCTAssertEqual(table.byName.map(table.title), ["a.example", "a.example", "b.example", "Note"])
        XCTAssertEqual(table.matching("b.ex", kind: nil, order: .name).map { table.row($0).recordID.words.high }, [shared | 1, 0x12345 << 44],
                       "a search finds a login by its second site too")
    }
}
