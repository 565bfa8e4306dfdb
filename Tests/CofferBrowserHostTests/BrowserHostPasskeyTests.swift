import Coffer
@testable import CofferBrowserHost
import Foundation
import XCTest

/// The host's passkey requests (SPEC.md §13.3): the relying-party check before anything is
/// looked up, malformed options refused with `badRequest`, exclusion, the person's choice as the
/// only way to a signature, and a key that is not on the curve signing nothing.
extension BrowserHostTests {
    var hash: String { Base64.encodeURL(Array(repeating: 7, count: 32)) }

    func create(_ origin: String = "https://login.example.com", rpId: String = "example.com", userID: String = "AQID",
                algorithms: [JSONValue] = [-7], exclude: [JSONValue] = []) -> JSONObject {
        ask(["type": "passkeyCreate", "origin": .string(origin), "rpId": .string(rpId), "clientDataHash": .string(hash),
             "user": ["id": .string(userID), "name": "alice", "displayName": "Alice"], "algorithms": .array(algorithms),
             "credentials": .array(exclude)])
    }

    func testTheRelyingPartyMustBeThePagesDomain() throws {
        try unlockBySession()
        for (origin, rpId) in [("https://login.example.com", "other.com"), ("https://login.example.com", "com"),
                               ("https://login.example.com", "xample.com"), ("http://login.example.com", "example.com"),
                               ("https://login.example.com", "Example.com"), ("https://example.com", "login.example.com")] {
            XCTAssertEqual(error(create(origin, rpId: rpId)), "relyingParty", "\(origin) for \(rpId)")
            XCTAssertEqual(error(ask(["type": "passkeyList", "origin": .string(origin), "rpId": .string(rpId)])), "relyingParty")
        }
        XCTAssertEqual(create("https://login.example.com", rpId: "example.com")["ok"], true, "a registrable domain above the host")
        XCTAssertEqual(create("https://login.example.com", rpId: "login.example.com")["ok"], true, "the host itself")
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "other.com").count, 0)
    }

    func testMalformedOptionsAreRefusedAndNothingIsStored() throws {
        try unlockBySession()
        let cases: [(String, JSONObject)] = [
            ("user.id over 64 bytes", ["user": ["id": .string(Base64.encodeURL(Array(repeating: 1, count: 65))), "name": "a"]]),
            ("empty user.id", ["user": ["id": "", "name": "a"]]),
            ("empty rpId", ["rpId": ""]),
            ("short clientDataHash", ["clientDataHash": .string(Base64.encodeURL([1, 2, 3]))]),
            ("a 100 KB clientDataHash", ["clientDataHash": .string(String(repeating: "A", count: 100_000))]),
            ("algorithms not numbers", ["algorithms": ["ES256"]]),
            ("credentials not ids", ["credentials": [1]]),
        ]
        for (name, change) in cases {
            var request: JSONObject = ["type": "passkeyCreate", "origin": "https://login.example.com", "rpId": "example.com",
                                       "clientDataHash": .string(hash), "user": ["id": "AQID", "name": "alice"], "algorithms": [-7]]
            for (key, value) in change { request[key] = value }
            XCTAssertEqual(error(ask(request)), "badRequest", name)
        }
        XCTAssertEqual(error(create(algorithms: [-257, -35])), "unsupported", "only algorithms Coffer lacks")
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 0, "nothing stored")
    }

    func testExcludedAndGetOnlyForAnOfferedPasskey() throws {
        try unlockBySession()
        let made = create()
        let credential = try XCTUnwrap(made["credentialId"]?.stringValue)
        XCTAssertEqual(error(create(exclude: [.string(credential)])), "excluded")
        let listed = ask(["type": "passkeyList", "origin": "https://login.example.com", "rpId": "example.com"])["passkeys"]?.arrayValue ?? []
        XCTAssertEqual(listed.count, 1)
        XCTAssertFalse(JSONValue.object(ask(["type": "passkeyList", "origin": "https://login.example.com", "rpId": "example.com"])).canonicalText.contains("key\""))
        let record = try XCTUnwrap(listed.first?.objectValue?["recordIdentifier"])
        let get: JSONObject = ["type": "passkeyGet", "origin": "https://login.example.com", "rpId": "example.com", "clientDataHash": .string(hash),
                               "recordIdentifier": record]
        XCTAssertEqual(ask(get)["credentialId"]?.stringValue, credential)
        var other = get
        other["credentials"] = [.string(Base64.encodeURL(Array(repeating: 9, count: 16)))]
        XCTAssertEqual(error(ask(other)), "notFound", "allowCredentials that do not name it")
        let password = try XCTUnwrap(try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "https://login.example.com")]).first)
        var forged = get
        forged["recordIdentifier"] = .string(password.identity.recordIdentifier)
        XCTAssertEqual(error(ask(forged)), "notFound", "a login without a passkey")
    }

    func testAKeyNotOnTheCurveSignsNothing() throws {
        try unlockBySession()
        let made = create()
        let id = try RecordID(hex: try XCTUnwrap(made["recordIdentifier"]?.stringValue))
        let owner = try Vault.open(vault.container, configuration: vault.configuration)
        try owner.unlock(masterPassword: SecureBytes(copying: Array(Self.master.utf8)))
        try owner.updateRecord(withID: id) { record in
            var key = record.passkey!.privateKey
            key[key.count - 1] ^= 1  // the stored public point's last byte: off the curve
            record.passkey!.privateKey = key
        }
        let answer = ask(["type": "passkeyGet", "origin": "https://login.example.com", "rpId": "example.com", "clientDataHash": .string(hash),
                          "recordIdentifier": .string(id.hex)])
        XCTAssertEqual(error(answer), "failed")
        XCTAssertTrue(answer["error"]?.objectValue?["message"]?.stringValue?.contains("unusable") == true, "\(answer)")
        XCTAssertNil(answer["signature"])
    }

    func testLockedWithoutPinentryAnswerSignsNothing() throws {
        try vault.identityStore.enable()
        try unlockBySession()
        let made = create()
        _ = try sessions.revoke(for: vault.vaultID)
        try pinentryAnswers(["CANCEL"])
        let answer = ask(["type": "passkeyGet", "origin": "https://login.example.com", "rpId": "example.com", "clientDataHash": .string(hash),
                          "recordIdentifier": made["recordIdentifier"] ?? .null])
        XCTAssertEqual(error(answer), "cancelled")
        XCTAssertEqual(pinentryPrompts, 1)
    }
}

/// Upgrades and signals at the host (issue 56, SPEC.md §13.3): Undo only for what an upgrade of
/// this host made, a signal's answer the same whatever happened, five a minute per rpId.
extension BrowserHostTests {
    func upgrade(login: String, name: String = "alice") -> JSONObject {
        ask(["type": "passkeyCreate", "conditional": true, "recordIdentifier": .string(login), "origin": "https://login.example.com",
             "rpId": "login.example.com", "clientDataHash": .string(hash), "user": ["id": "AQID", "name": .string(name)], "algorithms": [-7]])
    }

    func testAnUpgradeNeverPromptsAndOnlyItsOwnPasskeyCanBeUndone() throws {
        let login = try XCTUnwrap(vault.allRecords().first { $0.user == "alice" })
        XCTAssertEqual(error(upgrade(login: login.id.hex)), "forbidden", "locked: refused")
        XCTAssertEqual(pinentryPrompts, 0, "and nothing asked")
        try unlockBySession()
        XCTAssertEqual(error(upgrade(login: login.id.hex, name: "mallory")), "forbidden", "another account")
        let made = upgrade(login: login.id.hex)
        XCTAssertEqual(made["ok"], true, "\(made)")
        let credential = try XCTUnwrap(made["credentialId"]?.stringValue)
        // A passkey the sheet made is no upgrade's: Undo refuses it.
        let sheet = create(rpId: "example.com", userID: "BAUG")
        let sheetCredential = try XCTUnwrap(sheet["credentialId"]?.stringValue)
        let sheetRecord = try XCTUnwrap(sheet["recordIdentifier"]?.stringValue)
        XCTAssertEqual(error(ask(["type": "passkeyUndo", "origin": "https://login.example.com", "recordIdentifier": .string(sheetRecord),
                                  "credentialId": .string(sheetCredential)])), "notFound")
        // Another site's page cannot undo it; this one can, once.
        XCTAssertEqual(error(ask(["type": "passkeyUndo", "origin": "https://other.example.org", "recordIdentifier": .string(login.id.hex),
                                  "credentialId": .string(credential)])), "relyingParty")
        XCTAssertEqual(ask(["type": "passkeyUndo", "origin": "https://login.example.com", "recordIdentifier": .string(login.id.hex),
                            "credentialId": .string(credential)])["undone"], true)
        XCTAssertNil(try vault.record(withID: login.id).passkey)
        XCTAssertEqual(try vault.record(withID: login.id).password, "AlicePassword")
        XCTAssertEqual(error(ask(["type": "passkeyUndo", "origin": "https://login.example.com", "recordIdentifier": .string(login.id.hex),
                                  "credentialId": .string(credential)])), "notFound")
    }

    func testSignalsAreCheckedRateLimitedAndAnsweredAlike() throws {
        try unlockBySession()
        var ids: [String] = []
        for user in ["AQID", "BAUG"] {
            ids.append(try XCTUnwrap(create(rpId: "example.com", userID: user)["credentialId"]?.stringValue))
        }
        func signal(_ id: String, origin: String = "https://login.example.com", rpId: String = "example.com") -> JSONObject {
            ask(["type": "passkeySignal", "origin": .string(origin), "rpId": .string(rpId), "signal": "unknownCredential", "credentialId": .string(id)])
        }
        XCTAssertEqual(error(signal(ids[0], rpId: "other.com")), "relyingParty", "a foreign rpId")
        XCTAssertEqual(error(signal("not base64url!")), "badRequest")
        let unknown = Base64.encodeURL(Array(repeating: 9, count: 16))
        func shape(_ answer: JSONObject) -> JSONObject { answer.filter(names: { $0 != "elapsedMs" && $0 != "id" }) }
        XCTAssertEqual(shape(signal(unknown)), shape(signal(ids[0])), "a credential the vault lacks and one it hides: the same answer")
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 1, "the known one hidden")
        // Two taken so far this minute; three more are taken, then every further one is dropped.
        for _ in 0..<3 { XCTAssertEqual(signal(unknown)["ok"], true) }
        XCTAssertEqual(shape(signal(ids[1])), shape(signal(unknown)), "dropped, yet answered alike")
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 1, "past the limit: nothing hidden")
    }
}

extension BrowserHostTests {
    /// Showing a hidden passkey again reads every record; a page may make the host do that at
    /// most once a minute (SPEC.md §8.2.2).
    func testAPageCannotMakeTheHostReadEveryRecordMoreThanOnceAMinute() throws {
        try unlockBySession()
        let made = create(rpId: "example.com", userID: "AQID")
        let id = try XCTUnwrap(made["credentialId"]?.stringValue)
        let record = try RecordID(hex: try XCTUnwrap(made["recordIdentifier"]?.stringValue))
        func signal(_ members: JSONObject) {
            var request: JSONObject = ["type": "passkeySignal", "origin": "https://login.example.com", "rpId": "example.com"]
            for (key, value) in members { request[key] = value }
            XCTAssertEqual(ask(request)["ok"], true)
        }
        let unknown: JSONObject = ["signal": "unknownCredential", "credentialId": .string(id)]
        let accepted: JSONObject = ["signal": "allAcceptedCredentials", "userId": "AQID", "allAcceptedCredentialIds": [.string(id)]]
        signal(unknown)
        XCTAssertNotNil(try vault.record(withID: record).passkey?.hidden)
        signal(accepted)
        XCTAssertNil(try vault.record(withID: record).passkey?.hidden, "shown again: the records were read")
        signal(unknown)
        signal(accepted)
        XCTAssertNotNil(try vault.record(withID: record).passkey?.hidden, "within the minute: not read again, so still hidden")
    }
}
