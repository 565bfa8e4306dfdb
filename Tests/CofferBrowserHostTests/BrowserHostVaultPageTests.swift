import Coffer
@testable import CofferBrowserHost
import Foundation
import XCTest

/// The vault page's requests (SPEC.md §13.7), on the host of `BrowserHostTests`: the list is
/// names only and answers while locked; an item, its code, a save and a delete go through
/// pinentry; a save is read by the library's rules, a bad or oversized member writes nothing,
/// and an edit or delete over a revision the page did not read is a `conflict`, nothing written.
extension BrowserHostTests {
    func testTheVaultPageListsEveryItemByNameWhileLockedPagedFilteredAndSorted() throws {
        let card = try vault.addItem(ItemContent(kind: .card, name: "Travel Visa", card: CardMember(number: "4111111111111111")))
        try vault.addItem(ItemContent(kind: .note, name: "Alarm code", notes: "1234"))
        let all = ask(["type": "vaultItems"])
        XCTAssertEqual(all["total"], 5, "\(all)")
        XCTAssertEqual(all["locked"], true)
        let titles = all["items"]?.arrayValue?.compactMap { $0.objectValue?["title"]?.stringValue }
        XCTAssertEqual(titles, ["Alarm code", "http://legacy.example.org", "https://login.example.com", "intranet.example.net", "Travel Visa"],
                       "by title, case-insensitively")
        let text = JSONValue.object(all).canonicalText
        XCTAssertFalse(text.contains("AlicePassword") || text.contains("4111") || text.contains("1234"), "names only")
        XCTAssertEqual(ask(["type": "vaultItems", "kind": "card"])["items"],
                       [["recordIdentifier": .string(card.id.hex), "vault": .null, "kind": "card", "title": "Travel Visa", "name": "Travel Visa",
                         "user": "", "site": "", "tags": [], "modified": .integer(ItemDetails(of: card).modified)]])
        XCTAssertEqual(ask(["type": "vaultItems", "query": "EXAMPLE.org"])["total"], 1, "a search is case-insensitive, over site, user and name")
        XCTAssertEqual(ask(["type": "vaultItems", "query": "dora"])["items"]?.arrayValue?.first?.objectValue?["user"], "dora")
        let second = ask(["type": "vaultItems", "offset": 2, "limit": 2])
        XCTAssertEqual(second["items"]?.arrayValue?.compactMap { $0.objectValue?["title"]?.stringValue }, ["https://login.example.com", "intranet.example.net"])
        XCTAssertEqual(second["total"], 5)
        XCTAssertEqual(ask(["type": "vaultItems", "vault": "no such team"])["total"], 0)
        XCTAssertEqual(error(ask(["type": "vaultItems", "limit": 501])), "badRequest")
        XCTAssertEqual(error(ask(["type": "vaultItems", "sort": "size"])), "badRequest")
        XCTAssertEqual(error(ask(["type": "vaultItems", "kind": "car"])), "badRequest")
        XCTAssertEqual(pinentryPrompts, 0, "a list never asks")

        // The table follows the vault: an item added elsewhere is listed at the next request.
        try vault.addItem(ItemContent(kind: .note, name: "Added elsewhere"))
        XCTAssertEqual(ask(["type": "vaultItems", "query": "elsewhere"])["total"], 1)
    }

    /// A page of the list carries the change token it was read at, `hello`'s then: a page whose
    /// list was asked for before a change (at the click, SPEC.md §13.7) and its `status` after
    /// compares later tokens with the list's, so it reads the list again.
    func testAListCarriesTheChangeTokenItWasReadAt() throws {
        let listed = ask(["type": "vaultItems"])
        XCTAssertEqual(listed["total"], 3)
        let token = try XCTUnwrap(listed["changeToken"]?.stringValue, "\(listed)")
        XCTAssertEqual(ask(["type": "hello"])["changeToken"]?.stringValue, token)
        try vault.addItem(ItemContent(kind: .note, name: "Added after the list"))
        XCTAssertNotEqual(ask(["type": "hello"])["changeToken"]?.stringValue, token, "the page sees the change against the list's token")
        let again = ask(["type": "vaultItems"])
        XCTAssertEqual(again["total"], 4)
        XCTAssertEqual(again["changeToken"], ask(["type": "hello"])["changeToken"])
    }

    /// Between requests the host builds again a kept table whose vault changed elsewhere, so the
    /// page opened next is answered from a table already current; it watches the index of each
    /// vault whose table it keeps, and never unlocks a vault for it.
    func testTheHostKeepsThePagesTableCurrentBetweenRequests() throws {
        XCTAssertNil(host.indexWatch, "no table is kept, no index watched")
        XCTAssertEqual(ask(["type": "vaultItems"])["total"], 3)
        XCTAssertEqual(host.indexWatch?.directories, [vault.container.indexDirectory])
        let before = try XCTUnwrap(host.pageTables[""])
        host.refreshPageTables()
        XCTAssertTrue(host.pageTables[""] === before, "an unchanged vault's table is kept")
        try vault.addItem(ItemContent(kind: .note, name: "Imported elsewhere"))
        host.refreshPageTables()
        let refreshed = try XCTUnwrap(host.pageTables[""])
        XCTAssertFalse(refreshed === before)
        XCTAssertEqual(refreshed.members.count, 4)
        XCTAssertEqual(ask(["type": "vaultItems", "query": "elsewhere"])["total"], 1)
        XCTAssertTrue(host.pageTables[""] === refreshed, "the request read the table made between requests")
        XCTAssertEqual(pinentryPrompts, 0)
    }

    /// The host runs as long as the browser: tables the page has not asked for in a while are
    /// let go and their index no longer watched, so the host sleeps; the next request builds
    /// the table again.
    func testTablesThePageNoLongerAsksForAreLetGo() throws {
        XCTAssertEqual(ask(["type": "vaultItems"])["total"], 3)
        host.pageTablesKept = .milliseconds(300)
        var pipe: [Int32] = [0, 0]
        XCTAssertEqual(Glibc.pipe(&pipe), 0)
        // A request comes after 5 s at the latest, so that a host that kept its tables returns.
        let returned = DispatchSemaphore(value: 0), written = DispatchSemaphore(value: 0), writeEnd = pipe[1]
        DispatchQueue.global().async {
            _ = returned.wait(timeout: .now() + 5)
            _ = write(writeEnd, "x", 1)
            written.signal()
        }
        let started = ContinuousClock.now
        host.waitForRequest(on: pipe[0])
        let waited = ContinuousClock.now - started
        returned.signal()
        written.wait()
        close(pipe[0])
        close(pipe[1])
        XCTAssertLessThan(waited, .seconds(4), "the host waited for the request instead")
        XCTAssertTrue(host.pageTables.isEmpty)
        XCTAssertNil(host.indexWatch, "a commit no longer wakes the host")
        XCTAssertEqual(ask(["type": "vaultItems"])["total"], 3, "built again when the page asks")
        XCTAssertNotNil(host.pageTables[""])
        XCTAssertNotNil(host.indexWatch)
    }

    /// Tags and dates come from the index (layout 4), so the list filters by tag and sorts by
    /// last modified while locked, as it searches by name — and follows an edit made elsewhere.
    func testTheVaultPageFiltersByTagAndSortsByLastModifiedWhileLocked() throws {
        func day(_ day: Int) -> Date { Date(timeIntervalSince1970: 1_780_000_000 + Double(day) * 86_400) }
        let tax = try vault.add(RecordDraft(ItemContent(kind: .note, name: "Tax return", tags: ["finance", "2026"]), modified: day(3)))
        try vault.add(RecordDraft(ItemContent(kind: .note, name: "Bank letter", tags: ["Finance"]), modified: day(1)))
        let router = try vault.add(RecordDraft(
            ItemContent(name: "Router", user: "admin", password: "RouterPassword", services: [CredentialServiceIdentifier(parsing: "router.example.net")],
                        tags: ["home"]), modified: day(2)))
        let finance = ask(["type": "vaultItems", "tag": "finance"])
        XCTAssertEqual(finance["items"]?.arrayValue?.compactMap { $0.objectValue?["title"]?.stringValue }, ["Tax return"],
                       "a tag is compared exactly: Finance is another tag")
        XCTAssertEqual(finance["items"]?.arrayValue?.first?.objectValue?["tags"], ["finance", "2026"], "\(finance)")
        XCTAssertEqual(finance["tags"], ["2026", "Finance", "finance", "home"], "every tag of the vault, for the filter, on the first page")
        XCTAssertNil(ask(["type": "vaultItems", "offset": 1])["tags"], "a later page does not name them again")
        XCTAssertEqual(ask(["type": "vaultItems", "tag": "home"])["items"]?.arrayValue?.first?.objectValue?["site"], "router.example.net",
                       "a login's tags are on the row of its identity")
        XCTAssertEqual(ask(["type": "vaultItems", "query": "financ"])["total"], 2, "a search looks in tags too")
        XCTAssertEqual(ask(["type": "vaultItems", "tag": "nothing"])["total"], 0)
        XCTAssertEqual(error(ask(["type": "vaultItems", "tag": 7])), "badRequest")

        func byModified() -> [String] {
            ask(["type": "vaultItems", "sort": "modified"])["items"]?.arrayValue?.compactMap { $0.objectValue?["title"]?.stringValue } ?? []
        }
        let older = byModified()
        XCTAssertEqual(Array(older.suffix(3)), ["Tax return", "Router", "Bank letter"], "newest first; the fixture's items are today's")
        XCTAssertEqual(ask(["type": "vaultItems", "tag": "finance", "sort": "modified"])["items"]?.arrayValue?.first?.objectValue?["modified"],
                       .integer(Int64(day(3).timeIntervalSince1970)))
        XCTAssertEqual(pinentryPrompts, 0, "while locked")
        XCTAssertEqual(ask(["type": "vaultItems", "tag": "finance"])["items"]?.arrayValue?.first?.objectValue?["recordIdentifier"], .string(tax.id.hex))

        // An edit elsewhere (the CLI's, the library's) moves the item up among today's, with its new tags.
        _ = try vault.updateRecord(withID: router.id) { $0.tags = ["home", "network"] }
        let newer = byModified()
        XCTAssertLessThan(try XCTUnwrap(newer.firstIndex(of: "Router")), try XCTUnwrap(newer.firstIndex(of: "Tax return")), "\(newer)")
        XCTAssertEqual(ask(["type": "vaultItems", "tag": "network"])["total"], 1)
    }

    func testTheVaultPageShowsEveryMemberAndTheCodeCoffersOtpShows() throws {
        let login = try vault.addItem(ItemContent(
            name: "GitHub", user: "octo", password: "GitHubPassword", services: [CredentialServiceIdentifier(parsing: "https://git.example.org")],
            tags: ["work"], fields: [RecordField(name: "recovery", value: "r-e-c", hidden: true)], otp: "otpauth://totp/GitHub:octo?secret=JBSWY3DPEHPK3PXP",
            notes: "two keys"))
        try pinentryAnswers([Self.master])
        let shown = try XCTUnwrap(ask(["type": "vaultItem", "recordIdentifier": .string(login.id.hex)])["item"]?.objectValue)
        XCTAssertEqual(shown["password"], "GitHubPassword")
        XCTAssertEqual(shown["sites"], ["https://git.example.org"])
        XCTAssertEqual(shown["tags"], ["work"])
        XCTAssertEqual(shown["fields"], [["name": "recovery", "value": "r-e-c", "hidden": true]])
        XCTAssertEqual(shown["revision"], .integer(login.revision))
        XCTAssertEqual(shown["changePasswordURL"], "https://git.example.org/.well-known/change-password", "a site without a published page")
        XCTAssertEqual(pinentryPrompts, 1)
        XCTAssertEqual(ask(["type": "vaultItem", "recordIdentifier": .string(login.id.hex), "vault": ""])["item"]?.objectValue?["name"], "GitHub",
                       "\"\" is one's own vault, as the list's filter names it")
        let code = ask(["type": "vaultCode", "recordIdentifier": .string(login.id.hex)])
        XCTAssertEqual(code["code"]?.stringValue, try vault.oneTimeCode(forRecordWithID: login.id).code)
        XCTAssertEqual(code["period"], 30)
        XCTAssertEqual(error(ask(["type": "vaultCode", "recordIdentifier": .string(try RecordID.random().hex)])), "notFound")

        let card = try vault.addItem(ItemContent(kind: .card, name: "Visa", card: CardMember(number: "4111111111111111", expiryMonth: 7, expiryYear: 2029)))
        let members = ask(["type": "vaultItem", "recordIdentifier": .string(card.id.hex)])["item"]?.objectValue?["members"]?.arrayValue ?? []
        XCTAssertEqual(members.first, ["key": "cardholder", "masked": false, "values": [""]])
        XCTAssertTrue(members.contains(["key": "number", "masked": true, "values": ["4111111111111111"]]))
        XCTAssertTrue(members.contains(["key": "expiry", "masked": false, "values": ["07/2029"]]), "as the CLI's text form writes it")
        XCTAssertEqual(ask(["type": "vaultForm"])["members"]?.objectValue?["card"]?.arrayValue?.count, 8)
    }

    func testTheVaultPageSavesWithTheLibrarysRulesAndNeverOverAnotherRevision() throws {
        try pinentryAnswers([Self.master])
        let created = ask(["type": "vaultSave", "item": [
            "kind": "card", "name": "Work card", "members": ["number": "4111 1111 1111 1111", "expiry": "07/29", "security code": "123"],
            "tags": ["work", " work ", "travel"],
        ]])
        let id = try RecordID(hex: XCTUnwrap(created["recordIdentifier"]?.stringValue, "\(created)"))
        let stored = try vault.record(withID: id)
        XCTAssertEqual(stored.card, CardMember(number: "4111111111111111", expiryMonth: 7, expiryYear: 2029, securityCode: "123"), "read as `coffer edit` reads it")
        XCTAssertEqual(stored.tags, ["work", "travel"])
        let count = try vault.recordIDs().count

        // Bad input: a rule's refusal names the member; nothing is written.
        for (item, code, member) in [
            (["kind": "card", "members": ["expiry": "13/29"]] as JSONObject, "invalid", "expiry"),
            (["kind": "identity", "members": ["number": "4111111111111111"]], "invalid", "number"),
            (["kind": "login", "sites": [.string("https://" + String(repeating: "a", count: 3000))]], "invalid", "service"),
            (["kind": "login", "otp": "not a secret!"], "invalid", "otp"),
            (["kind": "vehicle"], "invalid", "kind"),
            (["kind": "login", "notes": .string(String(repeating: "n", count: 70_000))], "badRequest", nil),
            (["kind": "login", "fields": .array(Array(repeating: ["name": "f", "value": "v"], count: 300))], "badRequest", nil),
            (["kind": "login", "name": 7], "badRequest", nil),
        ] as [(JSONObject, String, String?)] {
            let answer = ask(["type": "vaultSave", "item": .object(item)])
            XCTAssertEqual(error(answer), code, "\(item)")
            if let member { XCTAssertTrue(answer["error"]?.objectValue?["message"]?.stringValue?.hasPrefix(member) == true, "\(answer)") }
        }
        XCTAssertEqual(try vault.recordIDs().count, count, "nothing written")

        // An edit over the revision the page read; a second one over that same, older revision conflicts.
        let edited = ask(["type": "vaultSave", "recordIdentifier": .string(id.hex), "revision": .integer(stored.revision), "item": [
            "kind": "card", "name": "Work card", "members": ["number": "4111111111111111", "expiry": "08/2030"],
        ]])
        XCTAssertEqual(edited["revision"], .integer(stored.revision + 1), "\(edited)")
        XCTAssertEqual(try vault.record(withID: id).card?.expiryYear, 2030)
        let conflict = ask(["type": "vaultSave", "recordIdentifier": .string(id.hex), "revision": .integer(stored.revision), "item": [
            "kind": "card", "name": "Overwritten",
        ]])
        XCTAssertEqual(error(conflict), "conflict")
        XCTAssertEqual(conflict["current"]?.objectValue?["name"], "Work card", "the item as it is now, to show beside the page's")
        XCTAssertEqual(try vault.record(withID: id).name, "Work card", "nothing overwritten")
        XCTAssertEqual(error(ask(["type": "vaultDelete", "recordIdentifier": .string(id.hex), "revision": .integer(stored.revision)])), "conflict")
        XCTAssertNoThrow(try vault.record(withID: id), "nothing removed")
        XCTAssertEqual(ask(["type": "vaultDelete", "recordIdentifier": .string(id.hex), "revision": .integer(stored.revision + 1)])["deleted"], true)
        XCTAssertThrowsError(try vault.record(withID: id))
        XCTAssertEqual(pinentryPrompts, 1, "one unlock, one session")
    }

    /// The vault page's audit is `coffer audit`'s (`VaultAudit.ofVaults`): weak and reused logins
    /// with their change-password pages; breaches only when asked, through the range API, which
    /// sees five hex digits of a hash and nothing else.
    func testTheVaultPagesAuditIsCoffersAuditAndChecksBreachesOnlyWhenAsked() throws {
        for site in ["https://one.example.com", "https://two.example.com"] {
            try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: site)], user: "sam", password: "password"))
        }
        let requests = base + "/range-requests"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Helpers/range-api").standardized.path)
        server.arguments = [requests]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer { server.terminate() }
        let port = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        host.session.environment["COFFER_HIBP_URL"] = "http://127.0.0.1:\(port)"

        try pinentryAnswers([Self.master])
        let audit = ask(["type": "vaultAudit"])
        let findings = audit["findings"]?.arrayValue?.compactMap(\.objectValue) ?? []
        XCTAssertEqual(audit["checked"], 5, "\(audit)")
        XCTAssertEqual(findings.filter { $0["kind"] == "reused" }.count, 2)
        XCTAssertTrue(findings.contains { $0["kind"] == "weak" && $0["changePasswordURL"] == "https://one.example.com/.well-known/change-password" })
        XCTAssertFalse(JSONValue.object(audit).canonicalText.contains("\"password\""), "never a password")
        XCTAssertFalse(FileManager.default.fileExists(atPath: requests), "no breach check unless asked")
        let breached = ask(["type": "vaultAudit", "breaches": true])["findings"]?.arrayValue?.compactMap(\.objectValue).filter { $0["kind"] == "breached" } ?? []
        XCTAssertEqual(breached.count, 2)
        XCTAssertEqual(breached.first?["detail"], "seen 3861 times in breaches")
        let asked = try String(contentsOfFile: requests, encoding: .utf8).split(separator: "\n")
        XCTAssertTrue(asked.allSatisfy { $0.hasPrefix("/range/") && $0.count == "/range/".count + 5 }, "\(asked)")
        host.session.environment["COFFER_HIBP_URL"] = "http://127.0.0.1:1"
        XCTAssertEqual(error(ask(["type": "vaultAudit", "breaches": true])), "unavailable")
    }

    /// A team's items are listed beside one's own, named by their team, opened, edited and added
    /// there; a change to the team changes the token the page follows.
    func testTheVaultPageListsAndEditsATeamsItemsNamedByTheirTeam() throws {
        let team = try makeTeam("ops")
        let record = try team.addItem(ItemContent(kind: .note, name: "Deploy runbook", notes: "step one"))
        defer { _ = try? sessions.revoke(for: team.vaultID) }
        try sessions.store(vaultKey: vault.keys().vaultKey, for: vault.vaultID, idleTimeout: 60)

        let all = ask(["type": "vaultItems"])
        XCTAssertEqual(all["total"], 4, "\(all)")
        XCTAssertEqual(all["teams"], ["ops"])
        XCTAssertEqual(all["items"]?.arrayValue?.first?.objectValue?["vault"], "ops", "by title: Deploy runbook first, named by its team")
        XCTAssertEqual(ask(["type": "vaultItems", "vault": "ops"])["total"], 1)
        XCTAssertEqual(ask(["type": "vaultItems", "vault": ""])["total"], 3, "one's own only")

        let opened = ask(["type": "vaultItem", "recordIdentifier": .string(record.id.hex), "vault": "ops"])
        let shown = try XCTUnwrap(opened["item"]?.objectValue, "\(opened)")
        XCTAssertEqual(shown["notes"], "step one")
        XCTAssertEqual(error(ask(["type": "vaultItem", "recordIdentifier": .string(record.id.hex)])), "notFound", "not in one's own vault")
        let token = ask(["type": "hello"])["changeToken"]
        XCTAssertNotEqual(token, .null)
        let saved = ask(["type": "vaultSave", "vault": "ops", "recordIdentifier": .string(record.id.hex), "revision": .integer(record.revision),
                         "item": ["kind": "note", "name": "Deploy runbook", "notes": "step two"]])
        XCTAssertEqual(saved["vault"], "ops", "\(saved)")
        XCTAssertEqual(try team.record(withID: record.id).notes, "step two")
        XCTAssertNotEqual(ask(["type": "hello"])["changeToken"], token, "a team's change is a change the page follows")
        XCTAssertEqual(error(ask(["type": "vaultSave", "vault": "ops", "recordIdentifier": .string(record.id.hex), "revision": .integer(record.revision),
                                  "item": ["kind": "note", "name": "Deploy runbook"]])), "conflict")
        let added = ask(["type": "vaultSave", "vault": "ops", "item": ["kind": "note", "name": "On-call"]])
        XCTAssertNoThrow(try team.record(withID: RecordID(hex: XCTUnwrap(added["recordIdentifier"]?.stringValue))))

        // A team item's attachment is saved to Downloads as one's own is.
        let runbook = Array("#!/bin/sh\necho deploy\n".utf8)
        var offset = 0
        try team.attach(name: "deploy.sh", mediaType: "text/plain", to: record.id) { buffer in
            let count = min(buffer.count, runbook.count - offset)
            buffer.copyBytes(from: runbook[offset..<offset + count])
            offset += count
            return count
        }
        host.session.environment["XDG_DOWNLOAD_DIR"] = base + "/downloads"
        try FileManager.default.createDirectory(atPath: base + "/downloads", withIntermediateDirectories: true)
        XCTAssertEqual(error(ask(["type": "attachmentSave", "recordIdentifier": .string(record.id.hex), "name": "deploy.sh"])), "notFound",
                       "not an item of one's own vault")
        let saved2 = ask(["type": "attachmentSave", "recordIdentifier": .string(record.id.hex), "name": "deploy.sh", "vault": "ops"])
        XCTAssertEqual(saved2["path"]?.stringValue, base + "/downloads/deploy.sh", "\(saved2)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: base + "/downloads/deploy.sh")), Data(runbook))
        XCTAssertEqual(pinentryPrompts, 0, "the session opened both")
    }
}
