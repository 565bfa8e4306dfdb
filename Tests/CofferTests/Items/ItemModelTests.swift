import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// The library's item model (SPEC.md §6.6): the rules every host's edits follow, changes applied
/// to the item as it is when written, and an edit on a stale copy refused, never lost.
final class ItemModelTests: XCTestCase {
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
