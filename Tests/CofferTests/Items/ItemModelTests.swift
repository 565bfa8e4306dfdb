import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// The library's item model (SPEC.md §6.6): the rules every host's edits follow, changes applied
/// to the item as it is when written, and an edit on a stale copy refused, never lost.
final class ItemModelTests: XCTestCase {
    /// How a card's and an identity's members are read from what a person types (SPEC.md §6.6).
    func testCardAndIdentityValuesAreReadAsAPersonWritesThem() throws {
        XCTAssertEqual(try ItemRules.cardNumber(" 4111 1111-1111\t1111 "), "4111111111111111")
        XCTAssertEqual(try ItemRules.cardNumber(""), "")
        for bad in ["4111", "41111111111111111111", "4111 1111 1111 111x"] {
            XCTAssertThrows(try ItemRules.cardNumber(bad), bad) { ($0 as? ItemRuleViolation)?.member == .card }
        }
        for (text, month, year) in [("07/29", 7, 2029), ("7/2029", 7, 2029), ("2029-07", 7, 2029), ("12 30", 12, 2030)] as [(String, Int?, Int?)] {
            let date = try ItemRules.cardDate(text)
            XCTAssertTrue(date.month == month && date.year == year, text)
        }
        XCTAssertTrue(try ItemRules.cardDate("07") == (7, nil) && ItemRules.cardDate("2029") == (nil, 2029) && ItemRules.cardDate(" ") == (nil, nil))
        for bad in ["13/29", "0/29", "07/2", "07/029", "July 2029", "07/29/01", "2029-13"] {
            XCTAssertThrows(try ItemRules.cardDate(bad), bad) { ($0 as? ItemRuleViolation)?.member == .card }
        }
        XCTAssertEqual(ItemRules.cardDateText(month: 7, year: 2029), "07/2029")
        XCTAssertEqual(ItemRules.cardDateText(month: nil, year: 2029), "2029")
        XCTAssertEqual(try ItemRules.cardDigits("123", "security code", lengths: 3...4), "123")
        XCTAssertThrows(try ItemRules.cardDigits("12", "security code", lengths: 3...4)) { "\($0)".contains("3 to 4 digits") }
        for (text, code) in [("de", "DE"), ("DEU", "DE"), ("germany", "DE"), ("United States of America", "US"), ("UK", "GB"), ("", "")] {
            XCTAssertEqual(try ItemRules.country(text), code, text)
        }
        XCTAssertThrows(try ItemRules.country("Atlantis")) { ($0 as? ItemRuleViolation)?.member == .identity }
        XCTAssertEqual(ItemRules.countryName("NO"), "Norway")
    }

    func testARuleBrokenNamesItsMemberAndWritesNothing() throws {
        let vault = try Fixture.vault()
        let login = ItemContent(user: "alice", password: "pw", services: [try ItemRules.service("example.com")])
        let broken: [(ItemContent, ItemRuleViolation.Member)] = [
            (with(login) { $0.tags = ["work", "work"] }, .tag),
            (with(login) { $0.tags = [" "] }, .tag),
            (with(login) { $0.fields = [RecordField(name: "", value: "x")] }, .field),
            (with(login) { $0.otp = "otpauth://totp/x?secret=!!" }, .otp),
            (with(login) { $0.services = [CredentialServiceIdentifier(identifier: "a\0b", type: .domain)] }, .service),
            (with(login) { $0.user = String(repeating: "u", count: 4097) }, .user),
            (with(login) { $0.card = CardMember(number: "4111111111111111") }, .card),
            (with(login) { $0.kind = .card; $0.card = CardMember(expiryMonth: 13) }, .card),
            (with(login) { $0.kind = .card; $0.card = CardMember(expiryYear: 29) }, .card),
            (with(login) { $0.kind = .card; $0.identity = IdentityMember(city: "Oslo") }, .identity),
            (with(login) { $0.kind = .identity; $0.identity = IdentityMember(country: "no") }, .identity),
            (with(login) { $0.kind = .identity; $0.identity = IdentityMember(addressLines: Array(repeating: "x", count: 9)) }, .identity),
        ]
        for (content, member) in broken {
            XCTAssertThrows(try content.check()) { ($0 as? ItemRuleViolation)?.member == member }
            XCTAssertThrows(try vault.addItem(content)) { if case VaultError.invalidInput = $0 { return true }; return false }
        }
        XCTAssertEqual(try vault.recordIDs(), [], "nothing was written")
        XCTAssertThrows(try ItemRules.service("  ")) { ($0 as? ItemRuleViolation)?.member == .service }
        XCTAssertThrows(try ItemRules.kind("spaceship")) { ($0 as? ItemRuleViolation)?.member == .kind }
        XCTAssertThrows(try ItemRules.matchMode("sometimes")) { ($0 as? ItemRuleViolation)?.member == .match }
        XCTAssertEqual(ItemRules.tags(" work, home ,, work"), ["work", "home"])
        XCTAssertNil(try ItemRules.oneTimeCode("  ", account: "a"))
        XCTAssertEqual(try ItemRules.oneTimeCode("JBSWY3DPEHPK3PXP", account: "alice")?.hasPrefix("otpauth://totp/"), true)

        let stored = try vault.addItem(login)
        XCTAssertEqual(ItemContent(try vault.record(withID: stored.id)), login, "what was given is what is stored")
    }

    func testChangesApplyToTheItemAsItIsWhenWritten() throws {
        let vault = try Fixture.vault()
        let item = try vault.addItem(ItemContent(user: "alice", password: "old", services: [try ItemRules.service("example.com")], tags: ["a"]))
        // Another host changes the user meanwhile; this one's changes touch other members.
        try vault.updateItem(withID: item.id, applying: [.user("bob")])
        let changed = try vault.updateItem(withID: item.id, applying: [
            .password("new"), .addTag("b"), .addTag("a"), .removeTag("a"), .addService(try ItemRules.service("https://login.example.com")),
        ])
        XCTAssertEqual(changed.user, "bob", "the other host's change is kept")
        XCTAssertEqual(changed.tags, ["b"])
        XCTAssertEqual(changed.serviceIdentifiers.map(\.identifier), ["example.com", "https://login.example.com"])
        XCTAssertEqual(changed.passwordHistory.map(\.password), ["old"], "a replaced password goes to the history")
        XCTAssertEqual(changed.revision, 3)
        for refused: ItemChange in [.removeTag("nope"), .removeService(try ItemRules.service("nope.example")), .addTag(" ")] {
            XCTAssertThrows(try vault.updateItem(withID: item.id, applying: [.name("X"), refused])) {
                if case VaultError.invalidInput = $0 { return true }; return false
            }
        }
        XCTAssertEqual(try vault.record(withID: item.id).revision, 3, "a refused change writes nothing, not even the others")
    }

    func testAnEditOnAStaleCopyIsRefusedAndLosesNothing() throws {
        let vault = try Fixture.vault()
        let opened = try vault.addItem(ItemContent(user: "alice", password: "pw", services: [try ItemRules.service("example.com")]))
        var mine = ItemContent(opened)
        mine.notes = "my note"
        try vault.updateItem(withID: opened.id, applying: [.password("theirs")])  // a sync, another host
        XCTAssertThrows(try vault.updateItem(withID: opened.id, to: mine, ifRevision: opened.revision)) {
            $0 as? VaultError == .editConflict(opened.id, expected: 1, current: 2)
        }
        let current = try vault.record(withID: opened.id)
        XCTAssertEqual(current.password, "theirs")
        XCTAssertEqual(current.notes, "", "nothing of the stale edit was written")
        XCTAssertEqual(ItemContent(opened).changedMembers(in: ItemContent(current)), [.password], "what a person is told changed")
        let written = try vault.updateItem(withID: opened.id, to: mine, ifRevision: current.revision)
        XCTAssertEqual(written.notes, "my note")
        XCTAssertEqual(written.password, "pw", "the person chose theirs over the other: written whole")
        XCTAssertEqual(written.passwordHistory.map(\.password), ["theirs", "pw"], "and no password is lost")
    }

    private func with(_ content: ItemContent, _ change: (inout ItemContent) -> Void) -> ItemContent {
        var copy = content
        change(&copy)
        return copy
    }
}
