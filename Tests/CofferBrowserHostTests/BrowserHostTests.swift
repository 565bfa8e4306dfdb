import Coffer
@testable import CofferBrowserHost
import Foundation
import ScratchDirectories
import XCTest

/// The browser host's protocol (SPEC.md §13) in process, with a scripted pinentry: suggestions
/// while locked and never a password, fills only for a person's choice or under the provision
/// rule, pinentry for a locked vault, sessions that `coffer lock` ends, and bad input answered
/// with an error while the host goes on serving.
final class BrowserHostTests: XCTestCase {
    static let pinentry = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Helpers/scripted-pinentry").standardized.path
    static let master = "browser master"
    var base = ""
    var vault: Vault!
    var host: BrowserHost!
    let sessions = KeyringSessions()
    var answers: String { base + "/pinentry-answers" }
    var pinentryLog: String { base + "/pinentry-log" }

    override func setUpWithError() throws {
        base = ScratchDirectories.make(prefix: "coffer-browser-host")
        let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: base + "/state")
        vault = try Vault.create(
            in: GroupContainer(path: base + "/vault"), masterPassword: SecureBytes(copying: Array(Self.master.utf8)),
            kdf: KDFPolicy.testingParameters, configuration: configuration)
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://login.example.com")], user: "alice", password: "AlicePassword"))
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "http://legacy.example.org")], user: "old", password: "HttpPassword"))
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "intranet.example.net")], user: "dora", password: "DomainPassword"))
        let environment: Environment = ["PATH": "/usr/bin:/bin", "SCRIPTED_PINENTRY_ANSWERS": answers, "SCRIPTED_PINENTRY_LOG": pinentryLog]
        host = BrowserHost(container: vault.container, configuration: configuration, sessions: sessions,
                           interaction: PinentryInteraction(program: Self.pinentry, environment: environment))
    }

    override func tearDown() {
        _ = try? sessions.revoke(for: vault.vaultID)
    }

    func pinentryAnswers(_ lines: [String]) throws {
        try lines.joined(separator: "\n").write(toFile: answers, atomically: true, encoding: .utf8)
    }

    var pinentryPrompts: Int {
        ((try? String(contentsOfFile: pinentryLog, encoding: .utf8)) ?? "").components(separatedBy: "GETPIN").count - 1
    }

    @discardableResult
    func ask(_ request: JSONObject) -> JSONObject {
        host.respond(to: JSONValue.object(request).canonicalBytes).objectValue ?? [:]
    }

    func error(_ answer: JSONObject) -> String? { answer["error"]?.objectValue?["code"]?.stringValue }

    func testSuggestionsWorkLockedCarryNoPasswordAndMarkTheMatch() throws {
        let answer = ask(["id": 1, "type": "suggest", "origin": "https://login.example.com"])
        XCTAssertEqual(answer["ok"], true)
        XCTAssertEqual(answer["id"], 1)
        XCTAssertEqual(answer["locked"], true)
        let identities = answer["identities"]?.arrayValue ?? []
        XCTAssertEqual(identities.first?.objectValue?["user"], "alice")
        XCTAssertEqual(identities.first?.objectValue?["match"], "exact-url")
        XCTAssertEqual(identities.first?.objectValue?["automaticFill"], true)
        XCTAssertFalse(JSONValue.object(answer).canonicalText.contains("AlicePassword"))

        let sibling = ask(["type": "suggest", "origin": "https://www.example.com"])["identities"]?.arrayValue ?? []
        XCTAssertEqual(sibling.first?.objectValue?["match"], "registrable-domain", "a sibling host is offered, marked")
        XCTAssertEqual(sibling.first?.objectValue?["automaticFill"], false)
        XCTAssertEqual(ask(["type": "suggest", "origin": "https://evil-example.com"])["identities"], [])
        XCTAssertEqual(pinentryPrompts, 0, "suggestions never ask")
    }

    /// Asking what there is — the state, a page's suggestions, a search — is no use of an unlock
    /// session: a browser that loads pages all day must not keep an idle vault unlocked. A fill
    /// is a use (SPEC.md §13.3).
    func testSuggestionsDoNotPushBackTheIdleTimeoutAFillDoes() throws {
        try sessions.store(vaultKey: vault.keys().vaultKey, for: vault.vaultID, idleTimeout: 3600)
        func remaining() throws -> TimeInterval {
            guard case .unlocked(let remaining, _) = try sessions.status(for: vault.vaultID) else { XCTFail("the session ended"); return 0 }
            return remaining
        }
        // The last use is kept in whole seconds: 2.1 s on, an unused session has at most 3,597.9
        // left, one used just now more than 3,598.9.
        Thread.sleep(forTimeInterval: 2.1)
        XCTAssertEqual(ask(["type": "hello"])["locked"], false, "a live session is reported")
        let suggested = ask(["type": "suggest", "origin": "https://login.example.com"])
        XCTAssertEqual(suggested["locked"], false)
        XCTAssertEqual(ask(["type": "search", "query": "alice"])["ok"], true)
        XCTAssertLessThan(try remaining(), 3598.5, "asking re-armed the idle timeout")
        let id = suggested["identities"]?.arrayValue?.first?.objectValue?["recordIdentifier"]
        let filled = ask(["type": "fill", "origin": "https://login.example.com", "trigger": "choice", "recordIdentifier": id ?? .null])
        XCTAssertEqual(filled["password"], "AlicePassword", "\(filled)")
        XCTAssertGreaterThan(try remaining(), 3598.5, "a fill is a use")
        XCTAssertEqual(pinentryPrompts, 0, "the session unlocked it")
    }

    /// A payment or address field's list (SPEC.md §13.3): the cards' or identities' names, while
    /// locked and without asking; the chosen one's members only for an https page, through
    /// pinentry when locked, only of the kind asked for.
    func testCardsAndIdentitiesAreListedLockedAndFilledOnlyIntoHttpsPages() throws {
        let card = try vault.addItem(ItemContent(kind: .card, name: "Travel Visa", card: CardMember(
            cardholder: "Alice Example", number: "4111111111111111", expiryMonth: 7, expiryYear: 2029, securityCode: "123")))
        let home = try vault.addItem(ItemContent(kind: .identity, name: "Home", user: "alice", identity: IdentityMember(
            givenName: "Alice", familyName: "Example", addressLines: ["1 Main St"], city: "Springfield", country: "US")))
        let cards = ask(["type": "items", "kind": "card"])
        XCTAssertEqual(cards["locked"], true)
        XCTAssertEqual(cards["items"], [["recordIdentifier": .string(card.id.hex), "name": "Travel Visa", "user": ""]], "names only")
        XCTAssertFalse(JSONValue.object(cards).canonicalText.contains("4111"))
        XCTAssertEqual(ask(["type": "items", "kind": "identity"])["items"]?.arrayValue?.map { $0.objectValue?["name"] }, ["Home"])
        XCTAssertEqual(error(ask(["type": "items", "kind": "login"])), "badRequest")
        XCTAssertEqual(pinentryPrompts, 0, "a list never asks")

        XCTAssertEqual(error(ask(["type": "fillItem", "origin": "http://shop.example", "recordIdentifier": .string(card.id.hex), "kind": "card"])),
                       "forbidden", "never into an http page")
        XCTAssertEqual(pinentryPrompts, 0, "refused before anything is asked")
        try pinentryAnswers([Self.master])
        let filled = ask(["type": "fillItem", "origin": "https://shop.example", "recordIdentifier": .string(card.id.hex), "kind": "card"])
        XCTAssertEqual(filled["card"]?.objectValue?["number"], "4111111111111111", "\(filled)")
        XCTAssertEqual(filled["card"]?.objectValue?["expiryMonth"], 7)
        XCTAssertEqual(pinentryPrompts, 1, "locked: pinentry first")
        XCTAssertEqual(error(ask(["type": "fillItem", "origin": "https://shop.example", "recordIdentifier": .string(home.id.hex), "kind": "card"])),
                       "notFound", "an identity is no card")
        let address = ask(["type": "fillItem", "origin": "http://localhost:8080", "recordIdentifier": .string(home.id.hex), "kind": "identity"])
        XCTAssertEqual(address["identity"]?.objectValue?["city"], "Springfield", "\(address)")
        XCTAssertEqual(address["user"], "alice")
        XCTAssertEqual(pinentryPrompts, 1, "the session answers")
    }

    /// A card submitted on a page and saved (SPEC.md §13.3): named by its brand and last digits,
    /// its code only when sent, only from https, never twice.
    func testASubmittedCardIsSavedOnceNamedByItsBrand() throws {
        XCTAssertEqual(error(ask(["type": "saveCard", "origin": "http://shop.example", "number": "4111111111111111"])), "forbidden")
        try pinentryAnswers([Self.master])
        let saved = ask(["type": "saveCard", "origin": "https://shop.example", "number": "4111 1111 1111 1111", "cardholder": "Alice Example",
                         "expiryMonth": 7, "expiryYear": 2029])
        XCTAssertEqual(saved["name"], "Visa •••• 1111", "\(saved)")
        let id = try RecordID(hex: XCTUnwrap(saved["recordIdentifier"]?.stringValue))
        XCTAssertEqual(try vault.record(withID: id).card, CardMember(
            cardholder: "Alice Example", number: "4111111111111111", brand: "Visa", expiryMonth: 7, expiryYear: 2029), "no code was sent, none kept")
        XCTAssertEqual(error(ask(["type": "saveCard", "origin": "https://other.example", "number": "4111111111111111", "securityCode": "123"])),
                       "exists", "the same number is not kept twice")
        let withCode = ask(["type": "saveCard", "origin": "https://shop.example", "number": "5555444433331111", "securityCode": "321"])
        XCTAssertEqual(withCode["name"], "Mastercard •••• 1111")
        XCTAssertEqual(try vault.record(withID: RecordID(hex: XCTUnwrap(withCode["recordIdentifier"]?.stringValue))).card?.securityCode, "321")
        XCTAssertEqual(error(ask(["type": "saveCard", "origin": "https://shop.example", "number": "1234"])), "badRequest")
        XCTAssertEqual(pinentryPrompts, 1)
        XCTAssertEqual(CardMember.brand(ofNumber: "378282246310005"), "American Express")
        XCTAssertEqual(CardMember.brand(ofNumber: "6011111111111117"), "Discover")
        XCTAssertEqual(CardMember.brand(ofNumber: "2223003122003222"), "Mastercard")
        XCTAssertNil(CardMember.brand(ofNumber: "9999888877776666"))
    }

    /// Text insertion (iOS 18's `prepareInterfaceForUserChoosingTextToInsert`, SPEC.md §13.3): the
    /// chooser finds items by name while locked; their values are named after pinentry, never
    /// sent; the chosen one's text comes through the provider, with no page named anywhere.
    func testTextInsertionNamesItemsAndValuesAndSendsOnlyTheChosenText() throws {
        let card = try vault.addItem(ItemContent(kind: .card, name: "Travel Visa", fields: [RecordField(name: "bank", value: "Example Bank")],
                                                 card: CardMember(number: "4111111111111111", securityCode: "123")))
        let found = ask(["type": "textItems", "query": "visa"])
        XCTAssertEqual(found["items"], [["recordIdentifier": .string(card.id.hex), "name": "Travel Visa", "kind": "card", "user": ""]])
        XCTAssertEqual(ask(["type": "textItems", "query": "alice"])["items"]?.arrayValue?.first?.objectValue?["kind"], "login", "a login by its site and user")
        XCTAssertEqual(pinentryPrompts, 0, "finding items never asks")
        try pinentryAnswers([Self.master])
        let members = ask(["type": "textMembers", "recordIdentifier": .string(card.id.hex)])
        XCTAssertEqual(members["members"], [
            ["member": "number", "label": "number", "secret": true], ["member": "security code", "label": "security code", "secret": true],
            ["member": "field 0", "label": "bank", "secret": false],
        ])
        XCTAssertFalse(JSONValue.object(members).canonicalText.contains("4111"), "names only")
        XCTAssertEqual(ask(["type": "insertText", "recordIdentifier": .string(card.id.hex), "member": "number"])["text"], "4111111111111111")
        XCTAssertEqual(ask(["type": "insertText", "recordIdentifier": .string(card.id.hex), "member": "field 0"])["text"], "Example Bank")
        XCTAssertEqual(error(ask(["type": "insertText", "recordIdentifier": .string(card.id.hex), "member": "password"])), "notFound")
        XCTAssertEqual(pinentryPrompts, 1)
        XCTAssertEqual(ask(["type": "lock"])["locked"], true)
        try pinentryAnswers(["CANCEL"])
        XCTAssertEqual(error(ask(["type": "insertText", "recordIdentifier": .string(card.id.hex), "member": "number"])), "cancelled")
    }

    func testAChoiceFillsThroughPinentryStartsASessionAndLockEndsIt() throws {
        let id = ask(["type": "suggest", "origin": "https://login.example.com"])["identities"]?.arrayValue?.first?.objectValue?["recordIdentifier"]
        try pinentryAnswers(["wrong", Self.master])
        let filled = ask(["type": "fill", "origin": "https://login.example.com", "trigger": "choice", "recordIdentifier": id ?? .null])
        XCTAssertEqual(filled["password"], "AlicePassword", "\(filled)")
        XCTAssertEqual(pinentryPrompts, 2, "a wrong password, then the right one")
        XCTAssertEqual(try sessions.status(for: vault.vaultID) == .locked, false, "a pinentry unlock starts a session")

        XCTAssertEqual(ask(["type": "fill", "origin": "https://login.example.com", "trigger": "command"])["password"], "AlicePassword")
        XCTAssertEqual(pinentryPrompts, 2, "the session answers without asking")

        XCTAssertEqual(ask(["type": "lock"])["locked"], true)
        try pinentryAnswers(["CANCEL"])
        let afterLock = ask(["type": "fill", "origin": "https://login.example.com", "trigger": "choice", "recordIdentifier": id ?? .null])
        XCTAssertEqual(error(afterLock), "cancelled", "locked again: the next fill asks, and cancel fills nothing")
        XCTAssertEqual(pinentryPrompts, 3)
        XCTAssertNil(afterLock["password"])
    }

    /// One's teams' logins (SPEC.md §16.6): suggested after one's own, each naming its team,
    /// and filled — by a choice and by the command — by the team's provider, unlocked through
    /// the owner's session.
    /// A team `name` founded by the vault's owner, which the host opens (its environment names
    /// where teams live).
    func makeTeam(_ name: String) throws -> Vault {
        let environment: Environment = ["HOME": base, "XDG_DATA_HOME": base + "/data"]
        host.session.environment = environment
        let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: base + "/state")
        return try Vault.createTeam(
            named: name, founder: vault.personalIdentity(), founderName: "alice", owner: vault.container,
            in: TeamDirectory.container(named: name, environment: environment), configuration: configuration)
    }

    func testATeamsLoginsAreSuggestedMarkedAndFilled() throws {
        let team = try makeTeam("ops")
        let record = try team.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://deploy.ops-corp.com")], user: "ci", password: "TeamPassword"))
        defer { _ = try? sessions.revoke(for: team.vaultID) }
        try sessions.store(vaultKey: vault.keys().vaultKey, for: vault.vaultID, idleTimeout: 60)

        let suggested = ask(["id": 1, "type": "suggest", "origin": "https://deploy.ops-corp.com"])
        let identities = suggested["identities"]?.arrayValue ?? []
        XCTAssertEqual(identities.count, 1)
        XCTAssertEqual(identities.first?.objectValue?["vault"], "ops")
        XCTAssertNil(identities.first?.objectValue?["password"])
        let chosen = ask(["id": 2, "type": "fill", "origin": "https://deploy.ops-corp.com", "trigger": "choice", "recordIdentifier": .string(record.id.hex)])
        XCTAssertEqual(chosen["password"], "TeamPassword", "\(chosen)")
        let command = ask(["id": 3, "type": "fill", "origin": "https://deploy.ops-corp.com", "trigger": "command"])
        XCTAssertEqual(command["password"], "TeamPassword", "\(command)")
        // Locked (the owner's session and the team's ended): no password, no prompt.
        host.session.lock(vault)
        let locked = ask(["id": 4, "type": "fill", "origin": "https://deploy.ops-corp.com", "trigger": "pageLoad", "topFrame": true])
        XCTAssertNil(locked["password"])
        XCTAssertEqual(pinentryPrompts, 0)
    }

    func testAChoiceMustBeOneOfTheOriginsSuggestions() throws {
        try unlockBySession()
        let other = ask(["type": "suggest", "origin": "http://legacy.example.org"])["identities"]?.arrayValue?.first?.objectValue?["recordIdentifier"]
        let answer = ask(["type": "fill", "origin": "https://login.example.com", "trigger": "choice", "recordIdentifier": other ?? .null])
        XCTAssertEqual(error(answer), "notFound", "a record of another site is not released to this origin")
        XCTAssertNil(answer["password"])
        let sibling = ask(["type": "suggest", "origin": "https://www.example.com"])["identities"]?.arrayValue?.first?.objectValue?["recordIdentifier"]
        XCTAssertEqual(ask(["type": "fill", "origin": "https://www.example.com", "trigger": "choice", "recordIdentifier": sibling ?? .null])["password"],
                       "AlicePassword", "a sibling the person clicked is filled")
        XCTAssertEqual(error(ask(["type": "fill", "origin": "https://www.example.com", "trigger": "command"])), "choiceRequired",
                       "the keyboard command never fills a sibling")
    }

    func testFillOnPageLoadOnlyUnlockedOnlyTopFrameAndHttpOnlyForHttpLogins() throws {
        XCTAssertEqual(error(ask(["type": "fill", "origin": "https://login.example.com", "trigger": "pageLoad", "topFrame": true])), "locked")
        XCTAssertEqual(pinentryPrompts, 0, "page load never asks")
        try unlockBySession()
        XCTAssertEqual(ask(["type": "fill", "origin": "https://login.example.com", "trigger": "pageLoad", "topFrame": true])["password"], "AlicePassword")
        XCTAssertEqual(error(ask(["type": "fill", "origin": "https://login.example.com", "trigger": "pageLoad"])), "forbidden", "not the top frame")
        XCTAssertEqual(ask(["type": "fill", "origin": "http://legacy.example.org", "trigger": "pageLoad", "topFrame": true])["password"], "HttpPassword")
        XCTAssertEqual(error(ask(["type": "fill", "origin": "http://intranet.example.net", "trigger": "pageLoad", "topFrame": true])), "forbidden",
                       "a login without a scheme is not filled into an http page by itself")
        XCTAssertEqual(error(ask(["type": "fill", "origin": "http://login.example.com", "trigger": "command"])), "notFound",
                       "an https login is never offered to http")
    }

    func testSaveStateSaveAndUpdate() throws {
        let origin: JSONValue = "https://new.example.com"
        XCTAssertEqual(ask(["type": "saveState", "origin": origin, "user": "nina", "password": "p1"])["state"], "new")
        try pinentryAnswers([Self.master])
        let saved = ask(["type": "save", "origin": origin, "user": "nina", "password": "p1"])
        XCTAssertNotNil(saved["recordIdentifier"], "\(saved)")
        XCTAssertEqual(ask(["type": "saveState", "origin": origin, "user": "nina", "password": "p1"])["state"], "unchanged")
        XCTAssertEqual(ask(["type": "saveState", "origin": origin, "user": "nina", "password": "p2"])["state"], "changed")
        XCTAssertEqual(error(ask(["type": "save", "origin": origin, "user": "nina", "password": "p2"])), "exists")
        let updated = ask(["type": "update", "origin": origin, "recordIdentifier": saved["recordIdentifier"] ?? .null, "password": "p2"])
        XCTAssertEqual(updated["revision"], 2)
        XCTAssertEqual(ask(["type": "fill", "origin": origin, "trigger": "command"])["password"], "p2")
        let alice = ask(["type": "suggest", "origin": "https://login.example.com"])["identities"]?.arrayValue?.first?.objectValue?["recordIdentifier"]
        XCTAssertEqual(error(ask(["type": "update", "origin": origin, "recordIdentifier": alice ?? .null, "password": "stolen"])), "notFound",
                       "an update names a login of this origin")
    }

    /// The web's data as shipped (SPEC.md §12.1), for the host's lookups.
    func useShippedWebQuirks() {
        host.session.environment = ["COFFER_WEB_QUIRKS": URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Data/web-quirks").standardized.path]
    }

    /// A login saved for airbnb.com on airbnb.co.uk (SPEC.md §8.1.1): suggested last, naming the
    /// site it was saved for, filled for a click, never for the keyboard command.
    func testASharingSitesLoginIsASuggestionNamingItsSite() throws {
        useShippedWebQuirks()
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://airbnb.com")], user: "abe", password: "AirbnbPassword"))
        let origin: JSONValue = "https://www.airbnb.co.uk"
        let shared = try XCTUnwrap(ask(["type": "suggest", "origin": origin])["identities"]?.arrayValue?.first?.objectValue)
        XCTAssertEqual(shared["match"], "shared-credential")
        XCTAssertEqual(shared["savedFor"], "airbnb.com")
        XCTAssertEqual(shared["automaticFill"], false)
        try unlockBySession()
        XCTAssertEqual(error(ask(["type": "fill", "origin": origin, "trigger": "command"])), "choiceRequired")
        XCTAssertEqual(ask(["type": "fill", "origin": origin, "trigger": "choice", "recordIdentifier": shared["recordIdentifier"] ?? .null])["password"],
                       "AirbnbPassword", "a person's click fills it")
        XCTAssertEqual(ask(["type": "suggest", "origin": "https://airbnb.com.evil.net"])["identities"], [])
    }

    /// On a site that asks for a code after the password, the stored password followed by digits
    /// is no change; a payment processor's frame in a shop's page offers no save; audit's flags
    /// for the popup come with the page to change the password, and only while unlocked.
    func testTwoFactorAppendEmbeddedFramesAndThePopupsAudit() throws {
        useShippedWebQuirks()
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://www.usaa.com")], user: "una", password: "Uq7#Rm2!Zx9$Kp4&"))
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://github.com")], user: "gina", password: "password"))
        try unlockBySession()
        func state(_ origin: String, _ password: String, top: String? = nil) -> JSONObject {
            var request: JSONObject = ["type": "saveState", "origin": .string(origin), "user": "una", "password": .string(password)]
            if let top { request["topOrigin"] = .string(top) }
            return ask(request)
        }
        XCTAssertEqual(state("https://www.usaa.com", "Uq7#Rm2!Zx9$Kp4&123456")["state"], "unchanged")
        XCTAssertEqual(state("https://www.usaa.com", "Uq7#Rm2!Zx9$Kp4&123456")["appendedCode"], true)
        XCTAssertEqual(state("https://www.usaa.com", "Uq7#Rm2!Zx9$Kp4&X23456")["state"], "changed", "only digits are a code")
        XCTAssertEqual(state("https://www.usaa.com", "Uq7#Rm2!Zx9$Kp4&12")["state"], "changed", "too short for a code")
        XCTAssertEqual(state("https://login.example.com", "AlicePassword123456")["state"], "new", "another user")

        XCTAssertEqual(state("https://cdn.plaid.com", "BankPassword", top: "https://shop.example.com")["state"], "embedded")
        XCTAssertEqual(state("https://cdn.plaid.com", "BankPassword", top: "https://dashboard.plaid.com")["state"], "new", "plaid's own page")
        XCTAssertEqual(state("https://pay.example.com", "BankPassword", top: "https://shop.example.com")["state"], "new", "not in the data")
        XCTAssertEqual(error(ask(["type": "saveState", "origin": "https://a.example.com", "user": "u", "password": "p", "topOrigin": 7])), "badRequest")

        let audit = ask(["type": "audit", "origin": "https://github.com"])
        let logins = audit["logins"]?.arrayValue ?? []
        XCTAssertEqual(logins.count, 1, "\(audit)")
        XCTAssertEqual(logins.first?.objectValue?["findings"], ["weak"])
        XCTAssertEqual(logins.first?.objectValue?["changePasswordURL"], "https://github.com/settings/security")
        XCTAssertFalse(JSONValue.object(audit).canonicalText.contains("\"password\""))
        XCTAssertEqual(ask(["type": "audit", "origin": "https://www.usaa.com"])["logins"], [], "nothing to flag")
        XCTAssertEqual(ask(["type": "lock"])["locked"], true)
        XCTAssertEqual(ask(["type": "audit", "origin": "https://github.com"])["locked"], true)
        XCTAssertEqual(pinentryPrompts, 0, "the popup's question never asks")
    }

    func testBadRequestsAreAnsweredAndServingGoesOn() {
        for (bytes, code) in [
            (Array("not json".utf8), "badRequest"), (Array("[1]".utf8), "badRequest"), (Array(#"{"type":"frobnicate"}"#.utf8), "unknownType"),
            (Array(#"{"type":"suggest"}"#.utf8), "badRequest"), (Array(#"{"type":"suggest","origin":"javascript:alert(1)"}"#.utf8), "badRequest"),
            (Array(#"{"type":"suggest","origin":"https://a.example.com/path"}"#.utf8), "badRequest"),
            (Array(#"{"type":"suggest","origin":"https://user@a.example.com"}"#.utf8), "badRequest"),
            (Array(#"{"type":"fill","origin":"https://login.example.com","trigger":"whenever"}"#.utf8), "badRequest"),
            (Array(#"{"type":"fill","origin":"https://login.example.com","trigger":"choice","recordIdentifier":"../x"}"#.utf8), "badRequest"),
            (Array(#"{"type":"generate","length":100000}"#.utf8), "badRequest"),
        ] {
            let answer = host.respond(to: bytes).objectValue ?? [:]
            XCTAssertEqual(answer["ok"], false, String(decoding: bytes, as: UTF8.self))
            XCTAssertEqual(error(answer), code, String(decoding: bytes, as: UTF8.self))
        }
        XCTAssertEqual(ask(["type": "hello"])["ok"], true, "still serving")
        XCTAssertEqual(ask(["type": "generate", "length": 24])["password"]?.stringValue?.count, 24)
    }

    /// A field's `passwordrules` shapes the password (SPEC.md §12.1); one that is malformed or
    /// cannot be met is passed over for the default, never an error the page could provoke.
    func testGenerateFollowsThePagesRule() {
        let ruled = ask(["type": "generate", "origin": "https://shop.example.com", "rules": "minlength: 12; maxlength: 12; required: digit; allowed: [abc]"])
        let password = ruled["password"]?.stringValue ?? ""
        XCTAssertNotNil(password.range(of: "^[abc0-9]{12}$", options: .regularExpression), password)
        XCTAssertTrue(password.contains(where: \.isNumber))
        XCTAssertEqual(ruled["rulesFrom"]?.stringValue, "page")
        XCTAssertEqual(ruled["rules"]?.stringValue, "minlength: 12; maxlength: 12; required: digit; allowed: digit, [abc]")
        for broken in ["minlength: 40; maxlength: 8", "frobnicate: 3", "allowed: [abc"] {
            let answer = ask(["type": "generate", "origin": "https://shop.example.com", "rules": .string(broken)])
            XCTAssertEqual(answer["ok"], true, broken)
            XCTAssertEqual(answer["rulesFrom"]?.stringValue, "default", broken)
            XCTAssertEqual(answer["password"]?.stringValue?.count, 20, broken)
        }
        XCTAssertEqual(error(host.respond(to: Array(#"{"type":"generate","rules":"a\u0000b"}"#.utf8)).objectValue ?? [:]), "badRequest")
        XCTAssertEqual(error(host.respond(to: Array(#"{"type":"generate","origin":"javascript:1"}"#.utf8)).objectValue ?? [:]), "badRequest")
    }

    func testOnlyCoffersExtensionIsACaller() {
        XCTAssertTrue(BrowserExtension.callerIsCoffer(["host", "chrome-extension://\(BrowserExtension.chromiumID)/"]))
        XCTAssertTrue(BrowserExtension.callerIsCoffer(["host", "/home/u/.mozilla/native-messaging-hosts/x.json", BrowserExtension.firefoxID]))
        XCTAssertFalse(BrowserExtension.callerIsCoffer(["host", "chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh/"]))
        XCTAssertFalse(BrowserExtension.callerIsCoffer(["host"]))
        XCTAssertFalse(BrowserExtension.callerIsCoffer(["host", "/x.json", "evil@example.com"]))
    }

    /// What `coffer unlock` does: a keyring session for this vault.
    /// An item's files for the extension's pages (issue 57): listed, a small one in the answer,
    /// any one saved to the downloads directory without replacing a file; locked asks pinentry.
    func testAttachmentsAreListedOpenedAndSaved() throws {
        try vault.unlock(masterPassword: SecureBytes(copying: Array(Self.master.utf8)))
        let id = try XCTUnwrap(try vault.allRecords().first { $0.user == "alice" }?.id)
        let small = Array("recovery codes\n".utf8), large = [UInt8](repeating: 7, count: BrowserRequest.maximumInlineAttachment + 1)
        for (name, bytes) in [("codes.txt", small), ("big.bin", large)] {
            var offset = 0
            try vault.attach(name: name, mediaType: name.hasSuffix(".txt") ? "text/plain" : "application/octet-stream", to: id) { buffer in
                let count = min(buffer.count, bytes.count - offset)
                buffer.copyBytes(from: bytes[offset..<offset + count])
                offset += count
                return count
            }
        }
        try pinentryAnswers([Self.master])
        let listed = ask(["id": 1, "type": "attachments", "recordIdentifier": .string(id.hex)])
        XCTAssertEqual(listed["attachments"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue }, ["codes.txt", "big.bin"], "\(listed)")
        XCTAssertEqual(pinentryPrompts, 1, "locked: pinentry asked once")
        XCTAssertNil(listed["attachments"]?.arrayValue?.first?.objectValue?["key"])

        let opened = ask(["id": 2, "type": "attachmentGet", "recordIdentifier": .string(id.hex), "name": "codes.txt"])
        XCTAssertEqual(opened["content"]?.stringValue.flatMap(Base64.decode), small)
        XCTAssertEqual(error(ask(["id": 3, "type": "attachmentGet", "recordIdentifier": .string(id.hex), "name": "big.bin"])), "tooLarge")
        XCTAssertEqual(error(ask(["id": 4, "type": "attachmentGet", "recordIdentifier": .string(id.hex), "name": "none"])), "notFound")

        host.session.environment = ["HOME": base, "XDG_DOWNLOAD_DIR": base + "/downloads", "PATH": "/usr/bin:/bin"]
        try FileManager.default.createDirectory(atPath: base + "/downloads", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: base + "/downloads/big.bin"))
        let saved = ask(["id": 5, "type": "attachmentSave", "recordIdentifier": .string(id.hex), "name": "big.bin"])
        XCTAssertEqual(saved["path"]?.stringValue, base + "/downloads/big (2).bin", "\(saved)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: base + "/downloads/big (2).bin")), Data(large))
        XCTAssertEqual(try String(contentsOfFile: base + "/downloads/big.bin", encoding: .utf8), "mine", "an existing file is never replaced")

        // The vault page adds a file a person chose: up to 512 KiB in one message, sealed as `coffer attach` seals it.
        let revision = try vault.record(withID: id).revision
        let added = ask(["id": 6, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": "note.txt", "mediaType": "text/plain",
                         "content": .string(Base64.encode(Array("chosen\n".utf8)))])
        XCTAssertEqual(added["size"], 7, "\(added)")
        XCTAssertEqual(try vault.record(withID: id).revision, revision + 1)
        var read: [UInt8] = []
        try vault.readAttachment(named: "note.txt", of: id) { read += $0 }
        XCTAssertEqual(read, Array("chosen\n".utf8))
        let taken = ask(["id": 7, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": "note.txt", "content": "eA=="])
        XCTAssertEqual(error(taken), "invalid", "a name the item has: \(taken)")
        XCTAssertEqual(error(ask(["id": 8, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": "a/b", "content": "eA=="])), "invalid")
        let oversized = String(repeating: "A", count: (BrowserRequest.maximumInlineAttachment + 2) / 3 * 4 + 4)
        XCTAssertEqual(error(ask(["id": 9, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": "big2.bin", "content": .string(oversized)])),
                       "badRequest", "over 512 KiB: coffer attach adds it")
        XCTAssertEqual(error(ask(["id": 10, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": "x.bin", "content": "not base64!"])), "badRequest")
        XCTAssertEqual(try vault.record(withID: id).attachments.map(\.name), ["codes.txt", "big.bin", "note.txt"], "nothing written on a refusal")
    }

    /// A file over 512 KiB comes from the page in parts (SPEC.md §13.3): the add names the
    /// upload, which is used once; a part or an add naming another upload is `notFound`; a new
    /// upload lets the pending one go; past the limit the upload is dropped. Nothing is written
    /// but by an add that succeeds.
    func testALargerFileIsAddedFromParts() throws {
        try vault.unlock(masterPassword: SecureBytes(copying: Array(Self.master.utf8)))
        let id = try XCTUnwrap(try vault.allRecords().first { $0.user == "alice" }?.id)
        let file = (0..<(BrowserRequest.maximumInlineAttachment * 2 + 1000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let parts = stride(from: 0, to: file.count, by: BrowserRequest.maximumInlineAttachment)
            .map { Array(file[$0..<min($0 + BrowserRequest.maximumInlineAttachment, file.count)]) }
        func part(_ bytes: [UInt8], _ upload: String?) -> JSONObject {
            var request: JSONObject = ["id": 1, "type": "attachmentPart", "content": .string(Base64.encode(bytes))]
            if let upload { request["upload"] = .string(upload) }
            return ask(request)
        }
        let first = part(parts[0], nil)
        let upload = try XCTUnwrap(first["upload"]?.stringValue, "\(first)")
        for bytes in parts.dropFirst() { XCTAssertEqual(part(bytes, upload)["upload"]?.stringValue, upload) }
        XCTAssertEqual(error(part([1], "another")), "notFound")
        let revision = try vault.record(withID: id).revision
        func add(_ name: String, _ upload: String) -> JSONObject {
            ask(["id": 2, "type": "attachmentAdd", "recordIdentifier": .string(id.hex), "name": .string(name), "upload": .string(upload)])
        }
        try pinentryAnswers([Self.master])
        let added = add("scan.pdf", upload)
        XCTAssertEqual(added["size"], .integer(Int64(file.count)), "\(added)")
        var read: [UInt8] = []
        try vault.readAttachment(named: "scan.pdf", of: id) { read += $0 }
        XCTAssertEqual(read, file, "the parts, in order")
        XCTAssertEqual(try vault.record(withID: id).revision, revision + 1, "one revision for the whole file")
        XCTAssertEqual(error(add("again.pdf", upload)), "notFound", "an upload is added once")

        // A new upload lets a pending one go; past the limit, the upload is dropped.
        let pending = try XCTUnwrap(part([1, 2, 3], nil)["upload"]?.stringValue)
        let next = try XCTUnwrap(part([4], nil)["upload"]?.stringValue)
        XCTAssertNotEqual(pending, next)
        XCTAssertEqual(error(add("old.bin", pending)), "notFound")
        host.uploadLimit = 1000
        XCTAssertEqual(error(part([UInt8](repeating: 0, count: 1000), next)), "invalid")
        XCTAssertEqual(error(add("over.bin", next)), "notFound", "an upload over the limit is dropped")
        XCTAssertEqual(try vault.record(withID: id).attachments.map(\.name), ["scan.pdf"], "nothing else written")
    }

    func unlockBySession() throws {
        let owner = try Vault.open(vault.container, configuration: vault.configuration)
        try owner.unlock(masterPassword: SecureBytes(copying: Array(Self.master.utf8)))
        try sessions.store(vaultKey: owner.keys().vaultKey, for: vault.vaultID, idleTimeout: 60)
    }
}

/// The real `coffer-browser-host` as the browser runs it: framed messages on a pipe, the caller
/// in argv, one process per connection that ends when stdin closes.
final class HostProcessTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    func frame(_ text: String) -> Data {
        var length = UInt32(text.utf8.count).littleEndian
        return Data(bytes: &length, count: 4) + Data(text.utf8)
    }

    func run(caller: [String], input: Data, container: String) throws -> (code: Int32, answers: [[String: Any]]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.products + "/coffer-browser-host")
        process.arguments = caller
        let base = FileManager.default.temporaryDirectory.path
        process.environment = ["COFFER_CONTAINER": container, "XDG_STATE_HOME": base + "/no-state", "HOME": base, "COFFER_PINENTRY": "/bin/false"]
        let stdin = Pipe(), stdout = Pipe()
        (process.standardInput, process.standardOutput) = (stdin, stdout)
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        var output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var answers: [[String: Any]] = []
        while output.count >= 4 {
            let length = Int(output.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            let body = output.dropFirst(4).prefix(length)
            answers.append((try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:])
            output = Data(output.dropFirst(4 + length))
        }
        return (process.terminationStatus, answers)
    }

    func testFramesAnOversizedMessageAndTheEndOfInput() throws {
        let container = ScratchDirectories.make(prefix: "coffer-host-process") + "/vault"
        _ = try Vault.create(in: GroupContainer(path: container), masterPassword: SecureBytes(copying: Array("m".utf8)), kdf: .interactive,
                             configuration: VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: container + "-state"))
        var oversized = UInt32(NativeMessaging.maximumLength + 1).littleEndian
        let input = frame(#"{"id":1,"type":"hello"}"#) + Data(bytes: &oversized, count: 4) + Data(count: NativeMessaging.maximumLength + 1)
            + frame("{broken") + frame(#"{"id":2,"type":"generate","length":16}"#)
        let result = try run(caller: ["chrome-extension://\(BrowserExtension.chromiumID)/"], input: input, container: container)
        XCTAssertEqual(result.code, 0, "stdin closed: the host ends")
        XCTAssertEqual(result.answers.count, 4)
        XCTAssertEqual(result.answers[0]["id"] as? Int, 1)
        XCTAssertEqual((result.answers[1]["error"] as? [String: Any])?["code"] as? String, "tooLarge")
        XCTAssertEqual((result.answers[2]["error"] as? [String: Any])?["code"] as? String, "badRequest")
        XCTAssertEqual((result.answers[3]["password"] as? String)?.count, 16, "still serving after both")
    }

    /// The host builds one's own table at its first pause, unasked, and builds it again when the
    /// vault commits elsewhere, with no request: seen from outside as the listing snapshot it
    /// reads for that being made, then made again for the new index; the page's list then
    /// has the new item.
    func testBetweenRequestsTheHostPreparesAndFollowsThePagesTable() throws {
        let base = ScratchDirectories.make(prefix: "coffer-host-idle")
        let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: base + "/state/coffer")  // the host's, by XDG_STATE_HOME
        let vault = try Vault.create(in: GroupContainer(path: base + "/vault"), masterPassword: SecureBytes(copying: Array("m".utf8)),
                                     kdf: .interactive, configuration: configuration)
        try vault.addItem(ItemContent(kind: .note, name: "First"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.products + "/coffer-browser-host")
        process.arguments = ["chrome-extension://\(BrowserExtension.chromiumID)/"]
        process.environment = ["COFFER_CONTAINER": base + "/vault", "XDG_STATE_HOME": base + "/state", "HOME": base, "COFFER_PINENTRY": "/bin/false"]
        let stdin = Pipe(), stdout = Pipe()
        (process.standardInput, process.standardOutput) = (stdin, stdout)
        try process.run()
        defer { try? stdin.fileHandleForWriting.close(); process.waitUntilExit() }
        func ask(_ request: String) throws -> [String: Any]? {
            stdin.fileHandleForWriting.write(frame(request))
            let length = Int(stdout.fileHandleForReading.readData(ofLength: 4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            return try JSONSerialization.jsonObject(with: stdout.fileHandleForReading.readData(ofLength: length)) as? [String: Any]
        }
        /// Waits for the event, not a timing: 30 s is far past the host's pause of 0.1 s.
        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while !condition() && Date() < deadline { usleep(20_000) }
            return condition()
        }
        XCTAssertEqual(try ask(#"{"id":1,"type":"hello"}"#)?["ok"] as? Bool, true)
        func listing() -> String? { FileManager.default.subpaths(atPath: base + "/state")?.first { $0.hasSuffix("/listing") }.map { base + "/state/" + $0 } }
        XCTAssertTrue(waitFor { listing() != nil }, "no page was opened, and the host read the vault for it")
        let before = try XCTUnwrap(listing().flatMap { FileManager.default.contents(atPath: $0) })
        try vault.addItem(ItemContent(kind: .note, name: "Added elsewhere"))
        XCTAssertTrue(waitFor { listing().flatMap { FileManager.default.contents(atPath: $0) } != before }, "the host read the changed vault unasked")
        XCTAssertEqual(try ask(#"{"id":2,"type":"vaultItems"}"#)?["total"] as? Int, 2)
    }

    func testAnUnknownCallerIsRefusedBeforeTheVaultIsTouched() throws {
        let result = try run(caller: ["chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"], input: frame(#"{"id":1,"type":"hello"}"#),
                             container: "/nonexistent/vault")
        XCTAssertEqual(result.code, 1)
        XCTAssertEqual(result.answers.count, 1)
        XCTAssertEqual((result.answers[0]["error"] as? [String: Any])?["code"] as? String, "forbidden")
    }
}

/// Passkeys only for domains (issue 51, item 2): an IP-address page registers and signs nothing,
/// and an rpId out of canonical form is refused, whatever the page claims.
final class RelyingPartyCheckTests: XCTestCase {
    func testIPAddressPagesAndNonCanonicalRelyingPartiesAreRefused() throws {
        func allowed(_ rpId: String, _ origin: String) -> Bool {
            guard let origin = try? BrowserOrigin(parsing: origin) else { return false }
            return (try? BrowserHost.checkRelyingParty(rpId, for: origin)) != nil
        }
        XCTAssertTrue(allowed("example.com", "https://login.example.com"))
        XCTAssertTrue(allowed("login.example.com", "https://login.example.com"))
        XCTAssertFalse(allowed("30.40", "https://10.20.30.40"), "a 'suffix' of an IP address")
        XCTAssertFalse(allowed("10.20.30.40", "https://10.20.30.40"))
        XCTAssertFalse(allowed("30.40", "https://99.88.30.40"), "the passkey made above cannot sign here")
        XCTAssertFalse(allowed("192.168.1.10", "https://192.168.1.10"))
        XCTAssertFalse(allowed("[2001:db8::1]", "https://[2001:db8::1]"))
        XCTAssertFalse(allowed("2001:db8::1", "https://[2001:db8::1]"))
        for rpId in ["Example.com", "example.com.", "https://example.com", "example.com:443", "exa_mple.com", "bücher.example"] {
            XCTAssertFalse(allowed(rpId, "https://example.com"), rpId)
        }
        XCTAssertTrue(allowed("xn--bcher-kva.example", "https://xn--bcher-kva.example"), "an A-label is canonical")
    }
}
