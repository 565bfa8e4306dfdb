import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// What a migrant does on day one (issue 19's "done when"): each real export — Bitwarden CSV and
/// JSON, a 1Password 1PUX made by a zip writer, KeePass 2 XML written by keepassxc-cli, a pass
/// store encrypted by gpg — with a login that has a one-time code, a folder, a hidden custom field
/// and a name, a secure note and a card, imports with nothing reported dropped; the code equals
/// oathtool's; the note is a note without a service.
final class ImportEndToEndTests: XCTestCase {
    let secret = "JBSWY3DPEHPK3PXP"
    var otp: String { "otpauth://totp/GitLab:me?secret=\(secret)&issuer=GitLab" }

    func harness() -> CLIHarness {
        let cli = CLIHarness()
        cli.initVault()
        return cli
    }

    func unlocked(_ arguments: [String], _ cli: CLIHarness) -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n")
    }

    /// Imports `path`, then checks the migrant's three items and that nothing was dropped.
    func assertMigrated(
        _ path: String, _ cli: CLIHarness, format: String, card: Bool = true, loginName: String = "GitLab", file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let imported = unlocked(["import", path], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr, file: file, line: line)
        XCTAssertTrue(imported.stderr.contains(format), imported.stderr, file: file, line: line)
        XCTAssertFalse(imported.stderr.contains("dropped"), "nothing of value is dropped:\n\(imported.stderr)", file: file, line: line)
        let login = try JSONSerialization.jsonObject(with: Data(unlocked(["show", loginName, "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual(login["kind"] as? String, "login", file: file, line: line)
        XCTAssertEqual(login["name"] as? String, loginName, file: file, line: line)
        XCTAssertEqual(login["user"] as? String, "me", file: file, line: line)
        XCTAssertTrue((login["tags"] as? [String])?.contains("Work") == true, "the folder: \(login["tags"] ?? "")", file: file, line: line)
        let fields = login["fields"] as? [[String: Any]] ?? []
        XCTAssertTrue(fields.contains { $0["name"] as? String == "recovery" && $0["value"] as? String == "R3C0" && ($0["hidden"] as? Bool == true || format.contains("pass") || format.contains("CSV")) },
                      "the custom field: \(fields)", file: file, line: line)
        XCTAssertNotNil(login["otp"] as? String, file: file, line: line)
        let code = unlocked(["otp", loginName, "--json"], cli).stdout
        let object = try JSONSerialization.jsonObject(with: Data(code.utf8)) as! [String: Any]
        let expected = try tool("/usr/bin/oathtool", ["--totp", "--base32", "-"], stdin: secret + "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(object["code"] as? String == expected || (object["remaining"] as? Int ?? 0) >= 29, "\(code) vs \(expected)", file: file, line: line)
        let note = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "my note", "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual(note["kind"] as? String, "note", file: file, line: line)
        XCTAssertEqual((note["serviceIdentifiers"] as? [Any])?.count, 0, "a note has no service", file: file, line: line)
        if card {
            // A card's members (SPEC.md §6.8), read from the export's own structure.
            let visa = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Visa", "--json"], cli).stdout.utf8)) as! [String: Any]
            XCTAssertEqual(visa["kind"] as? String, "card", file: file, line: line)
            let members = visa["card"] as? [String: Any] ?? [:]
            XCTAssertEqual(members["number"] as? String, "4111111111111111", "\(visa)", file: file, line: line)
            XCTAssertEqual(members["expiryMonth"] as? Int, 12, file: file, line: line)
            XCTAssertEqual(members["expiryYear"] as? Int, 2030, file: file, line: line)
            XCTAssertEqual(members["cardholder"] as? String, "Me", file: file, line: line)
            XCTAssertEqual(members["code"] as? String, "123", file: file, line: line)
            let me = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Home", "--json"], cli).stdout.utf8)) as! [String: Any]
            XCTAssertEqual(me["kind"] as? String, "identity", file: file, line: line)
            let identity = me["identity"] as? [String: Any] ?? [:]
            XCTAssertEqual(identity["givenName"] as? String, "Ann", "\(me)", file: file, line: line)
            XCTAssertEqual(identity["familyName"] as? String, "Smith", file: file, line: line)
            XCTAssertEqual(identity["addressLines"] as? [String], ["1 Main St", "Apt 2"], file: file, line: line)
            XCTAssertEqual(identity["city"] as? String, "Springfield", file: file, line: line)
            XCTAssertEqual(identity["country"] as? String, "US", "a country's name or code stored as its ISO code", file: file, line: line)
            XCTAssertEqual(identity["email"] as? String, "ann@example.com", file: file, line: line)
        }
        XCTAssertEqual(unlocked(["verify"], cli).code, 0, file: file, line: line)
    }

    /// An import changes most buckets, so it brings this device's listing and Tab tables up to
    /// date itself (SPEC.md §7.6): the `coffer list` after it, locked, answers with every item
    /// while the index has no bucket to read — the next list, Tab or vault page a person waits
    /// for does not rebuild them.
    func testTheImportPreparesTheListing() throws {
        let cli = harness()
        let csv = cli.container + "/../bulk.csv"
        try ("name,url,username,password\n" + (0..<500).map { "site\($0),https://site\($0).bulk.test,user\($0),Pw-\($0)\n" }.joined())
            .write(toFile: csv, atomically: true, encoding: .utf8)
        XCTAssertEqual(unlocked(["import", csv, "--format", "chrome"], cli).code, 0)
        XCTAssertEqual(cli.run(["lock"]).code, 0)
        let shards = cli.container + "/index/shards", away = cli.container + "/../shards-away"
        try FileManager.default.moveItem(atPath: shards, toPath: away)
        let listed = cli.run(["list"])
        try FileManager.default.moveItem(atPath: away, toPath: shards)
        XCTAssertEqual(listed.code, 0, listed.stderr)
        XCTAssertEqual(listed.stdout.components(separatedBy: "\n").filter { $0.contains(".bulk.test") }.count, 500, listed.stdout)
        XCTAssertEqual(cli.run(["list"]).stdout, listed.stdout)
    }

    func testBitwardenCSVAndJSON() throws {
        let cli = harness()
        let csv = cli.container + "/../bw.csv"
        try """
        folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
        Work,1,login,GitLab,,"recovery: R3C0",0,https://gitlab.com/users/sign_in,me,pw1,\(otp)
        ,,note,my note,secret text,,0,,,,

        """.write(toFile: csv, atomically: true, encoding: .utf8)
        try assertMigrated(csv, cli, format: "Bitwarden CSV", card: false)  // Bitwarden's CSV holds logins and notes only

        let other = harness()
        let json = other.container + "/../bw.json"
        try #"""
        {"encrypted":false,"folders":[{"id":"f1","name":"Work"}],"items":[
         {"id":"1","folderId":"f1","type":1,"reprompt":0,"name":"GitLab","notes":null,"favorite":false,"fields":[{"name":"recovery","value":"R3C0","type":1,"linkedId":null}],
          "login":{"uris":[{"match":null,"uri":"https://gitlab.com/users/sign_in"}],"username":"me","password":"pw1","totp":"OTP","fido2Credentials":[]},
          "passwordHistory":[{"lastUsedDate":"2024-01-02T03:04:05.678Z","password":"old"}],"collectionIds":null,"revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null},
         {"id":"2","folderId":null,"type":2,"reprompt":0,"name":"my note","notes":"secret text","favorite":false,"secureNote":{"type":0},"collectionIds":null,"revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null},
         {"id":"3","folderId":null,"type":3,"reprompt":0,"name":"Visa","notes":null,"favorite":false,"card":{"cardholderName":"Me","brand":"Visa","number":"4111111111111111","expMonth":"12","expYear":"2030","code":"123"},"collectionIds":null,"revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null},
         {"id":"4","folderId":null,"type":4,"reprompt":0,"name":"Home","notes":null,"favorite":false,"identity":{"title":"Ms","firstName":"Ann","middleName":null,"lastName":"Smith","address1":"1 Main St","address2":"Apt 2","address3":null,"city":"Springfield","state":"IL","postalCode":"62701","country":"United States","company":null,"email":"ann@example.com","phone":null,"ssn":"078-05-1120","username":"ann","passportNumber":null,"licenseNumber":null},"collectionIds":null,"revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null}]}
        """#.replacing("OTP", with: otp).write(toFile: json, atomically: true, encoding: .utf8)
        try assertMigrated(json, other, format: "Bitwarden JSON")
        let again = unlocked(["import", json], other)
        XCTAssertTrue(again.stderr.contains("skipped 4 duplicates"), again.stderr)
    }

    /// Bitwarden's CSV as Bitwarden writes it (issue 49, item 8): CRLF inside quoted cells, a
    /// `fields` cell of several `name: value` lines, an organisation's `collections` column.
    func testBitwardenCSVWithCRLFCellsAndCollections() throws {
        let cli = harness()
        let csv = cli.container + "/../bw-org.csv"
        let text = "collections,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\r\n"
            + "\"Infra,Ops\",login,Router,\"line one\r\nline two\",\"pin: 462916\r\noldpin: 489019\",0,https://router.example,admin,pw,\r\n"
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", csv], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        let router = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Router", "--json"], cli).stdout.utf8)) as? [String: Any])
        let fields = (router["fields"] as? [[String: Any]] ?? []).map { "\($0["name"]!)=\($0["value"]!)" }
        XCTAssertEqual(fields, ["pin=462916", "oldpin=489019"], "one field per line")
        XCTAssertEqual(router["notes"] as? String, "line one\nline two")
        XCTAssertEqual(router["tags"] as? [String], ["Infra", "Ops"], "the collections are tags")
    }

    /// A passkey's rpId is held to its canonical form wherever it enters (issue 51, item 2): an
    /// export's URL, upper case, trailing dot or U-label is stored canonical and told; one that
    /// names no domain (an IP address) leaves the passkey out and keeps the login.
    func testImportedPasskeysHaveCanonicalRelyingPartiesOrAreLeftOut() throws {
        let cli = harness()
        let key = Base64.encodeURL(try PasskeyPrivateKey.generate(.es256).pkcs8())
        func item(_ id: Int, _ rpId: String) -> String {
            #"{"id":"ID","type":1,"name":"Site ID","login":{"uris":[{"uri":"https://site.example"}],"username":"uID","password":"pID","fido2Credentials":[{"credentialId":"b64.AAECAwQFBgcICQoLDA0ODw","keyValue":"KEY","rpId":"RP","userHandle":"AQI","userName":"u","counter":"0","creationDate":"2024-01-01T00:00:00.000Z"}]}}"#
                // The random key last: its base64 may hold "RP" or "ID" (1 run in 20 failed so).
                .replacing("ID", with: String(id)).replacing("RP", with: rpId).replacing("KEY", with: key)
        }
        let json = cli.container + "/../bw-rpids.json"
        try (#"{"encrypted":false,"items":["# + [item(1, "https://Login.Example.COM./signin"), item(2, "Bücher.Example."), item(3, "10.20.30.40")]
            .joined(separator: ",") + "]}").write(toFile: json, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", json], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("is stored as 'login.example.com'"), imported.stderr)
        XCTAssertTrue(imported.stderr.contains("is stored as 'xn--bcher-kva.example'"), imported.stderr)
        XCTAssertTrue(imported.stderr.contains("'10.20.30.40', which is no domain"), imported.stderr)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["list", "--json"], cli).stdout.utf8)) as? [[String: Any]])
        let passkeys = rows.filter { $0["type"] as? String == "passkey" }.compactMap { ($0["serviceIdentifier"] as? [String: Any])?["identifier"] as? String }
        XCTAssertEqual(Set(passkeys), ["login.example.com", "xn--bcher-kva.example"])
        XCTAssertEqual(unlocked(["fill", "site.example", "--user", "u3"], cli).stdout, "p3\n", "the login without its passkey is kept")
        XCTAssertEqual(unlocked(["verify"], cli).code, 0)
    }

    /// A Bitwarden passkey's members that Coffer's passkey does not keep are named in the report.
    func testBitwardenPasskeyMembersNotKeptAreNamed() throws {
        let cli = harness()
        let key = Base64.encodeURL(try PasskeyPrivateKey.generate(.es256).pkcs8())
        let json = cli.container + "/../bw-passkey.json"
        try #"""
        {"encrypted":false,"items":[{"id":"1","type":1,"name":"Site","login":{"uris":[{"uri":"https://site.example"}],"username":"u","password":"p",
          "fido2Credentials":[{"credentialId":"b64.AAECAwQFBgcICQoLDA0ODw","keyType":"public-key","keyAlgorithm":"ECDSA","keyCurve":"P-256",
          "keyValue":"KEY","rpId":"site.example","rpName":"Site","userHandle":"AQI","userName":"u","userDisplayName":"U","counter":"0",
          "discoverable":"true","creationDate":"2024-01-01T00:00:00.000Z"}]}}]}
        """#.replacing("KEY", with: key).write(toFile: json, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", json, "--dry-run"], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        for member in ["rpName", "keyType", "keyAlgorithm", "keyCurve"] {
            XCTAssertTrue(imported.stderr.contains("login.fido2Credentials.\(member)"), "\(member) is named: \(imported.stderr)")
        }
    }

    /// A real organisation export: one junk TOTP must not block the migration, collections
    /// become tags, and every custom-field type survives (issue 28, item 14).
    func testBitwardenOrganisationExportWithJunkKeepsEverything() throws {
        let cli = harness()
        let json = cli.container + "/../org.json"
        try #"""
        {"encrypted":false,"collections":[{"id":"c1","organizationId":"o1","name":"Infra","externalId":null}],"items":[
         {"id":"1","organizationId":"o1","folderId":null,"type":1,"reprompt":0,"name":"Router","notes":null,"favorite":false,
          "fields":[{"name":"site","value":"basement","type":0,"linkedId":null},{"name":"pin","value":"0000","type":1,"linkedId":null},
                    {"name":"admin","value":"true","type":2,"linkedId":null},{"name":"login name","value":null,"type":3,"linkedId":100}],
          "login":{"uris":[{"match":null,"uri":"https://router.example"}],"username":"admin","password":"pw","totp":"ask Bob (0189)"},
          "collectionIds":["c1"],"revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null},
         {"id":"2","organizationId":"o1","folderId":null,"type":1,"reprompt":0,"name":"Good","notes":null,"favorite":false,
          "login":{"uris":[],"username":"g","password":"pw2","totp":"JBSWY3DPEHPK3PXP"},"collectionIds":["c1"],
          "revisionDate":"2024-01-03T00:00:00.000Z","creationDate":"2024-01-01T00:00:00.000Z","deletedDate":null}]}
        """#.write(toFile: json, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", json], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("not a code") && imported.stderr.contains("one-time code (unreadable)"), imported.stderr)
        let router = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Router", "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual(router["tags"] as? [String], ["Infra"], "the collection is a tag")
        XCTAssertTrue(router["otp"] == nil || router["otp"] is NSNull, "junk is not a code")
        let fields = (router["fields"] as? [[String: Any]] ?? []).map { "\($0["name"]!)=\($0["value"]!)/\($0["hidden"] as? Bool ?? false)" }
        XCTAssertEqual(fields, ["site=basement/false", "pin=0000/true", "admin=true/false", "login name=(linked to the item's username)/false",
                                "one-time code (unreadable)=ask Bob (0189)/true"])
        XCTAssertEqual(unlocked(["otp", "Good"], cli).code, 0, "the other item's code came through")
    }

    /// A CSV header wider than any export is refused (65) instead of costing the square of its
    /// width (issue 28, item 5).
    func testAnAbsurdlyWideCSVIsRefusedAndAWideOneIsRead() throws {
        let cli = harness()
        let wide = cli.container + "/../wide.csv", absurd = cli.container + "/../absurd.csv"
        let extra = (1...4000).map { "c\($0)" }
        try ("name,url,username,password," + extra.joined(separator: ",") + "\nA,https://a.example,u,p," + extra.joined(separator: ",") + "\n")
            .write(toFile: wide, atomically: true, encoding: .utf8)
        let read = unlocked(["import", wide, "--dry-run"], cli)
        XCTAssertEqual(read.code, 0, read.stderr)
        XCTAssertTrue(read.stderr.contains("c4000 → field 'c4000' (1)"), String(read.stderr.suffix(300)))
        try ("name,url,username,password," + (1...5000).map { "c\($0)" }.joined(separator: ",") + "\n").write(toFile: absurd, atomically: true, encoding: .utf8)
        let refused = unlocked(["import", absurd, "--dry-run"], cli)
        XCTAssertEqual(refused.code, 65, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("5004 columns"), refused.stderr)
    }

    func testOnePassword1PUX() throws {
        let cli = harness()
        let archive = cli.container + "/../export.1pux"
        try python("""
        import json, sys, zipfile
        otp = sys.argv[2]
        item = lambda uuid, cat, title, details, overview={}: {"uuid": uuid, "favIndex": 0, "createdAt": 1700000000, "updatedAt": 1700000100, "state": "active", "categoryUuid": cat, "details": details, "overview": dict({"title": title, "tags": []}, **overview)}
        items = [
          item("1", "001", "GitLab", {"loginFields": [{"value": "me", "designation": "username", "fieldType": "T"}, {"value": "pw1", "designation": "password", "fieldType": "P"}], "notesPlain": "",
               "sections": [{"title": "", "fields": [{"title": "one-time password", "value": {"totp": otp}}, {"title": "recovery", "value": {"concealed": "R3C0"}}]}], "passwordHistory": [{"value": "old", "time": 1690000000}]},
               {"urls": [{"label": "", "url": "https://gitlab.com/users/sign_in"}], "url": "https://gitlab.com/users/sign_in"}),
          item("2", "003", "my note", {"notesPlain": "secret text", "sections": []}),
          item("3", "002", "Visa", {"sections": [{"title": "", "fields": [{"title": "cardholder name", "id": "cardholder", "value": {"string": "Me"}}, {"title": "number", "id": "ccnum", "value": {"creditCardNumber": "4111111111111111"}}, {"title": "verification number", "id": "cvv", "value": {"concealed": "123"}}, {"title": "expiry date", "id": "expiry", "value": {"monthYear": 203012}}]}, {"title": "contact information", "fields": [{"title": "phone (toll free)", "id": "phoneTollFree", "value": {"phone": "+1 800 555 0100"}}]}]}),
          item("4", "004", "Home", {"sections": [{"title": "Identification", "fields": [{"title": "first name", "id": "firstname", "value": {"string": "Ann"}}, {"title": "last name", "id": "lastname", "value": {"string": "Smith"}}, {"title": "birth date", "id": "birthdate", "value": {"date": 315532800}}]}, {"title": "Address", "fields": [{"title": "address", "id": "address", "value": {"address": {"street": "1 Main St\\nApt 2", "city": "Springfield", "state": "IL", "zip": "62701", "country": "us"}}}, {"title": "email", "id": "email", "value": {"email": {"email_address": "ann@example.com", "provider": None}}}]}]}),
        ]
        data = {"accounts": [{"attrs": {"name": "Me"}, "vaults": [{"attrs": {"name": "Work"}, "items": items}]}]}
        with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("export.attributes", json.dumps({"version": 3}))
            z.writestr("export.data", json.dumps(data))
        """, [archive, otp])
        try assertMigrated(archive, cli, format: "1Password 1PUX")
    }

    func testKeePass2XMLWrittenByKeePassXC() throws {
        let cli = harness()
        let base = cli.container + "/.."
        let fixture = """
        <?xml version="1.0" encoding="UTF-8"?>
        <KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAQ==</UUID><Name>Passwords</Name>
         <Group><UUID>AAAAAAAAAAAAAAAAAAAAAg==</UUID><Name>Work</Name>
          <Entry><UUID>AAAAAAAAAAAAAAAAAAAAAw==</UUID>
           <String><Key>Title</Key><Value>GitLab</Value></String><String><Key>UserName</Key><Value>me</Value></String>
           <String><Key>Password</Key><Value ProtectInMemory="True">pw1</Value></String><String><Key>URL</Key><Value>https://gitlab.com/users/sign_in</Value></String>
           <String><Key>recovery</Key><Value ProtectInMemory="True">R3C0</Value></String><String><Key>otp</Key><Value ProtectInMemory="True">\(otp.replacing("&", with: "&amp;"))</Value></String>
          </Entry></Group>
         <Entry><UUID>AAAAAAAAAAAAAAAAAAAABA==</UUID><String><Key>Title</Key><Value>my note</Value></String><String><Key>Notes</Key><Value>secret text</Value></String></Entry>
         <Entry><UUID>AAAAAAAAAAAAAAAAAAAABQ==</UUID><String><Key>Title</Key><Value>Visa</Value></String><String><Key>number</Key><Value ProtectInMemory="True">4111111111111111</Value></String></Entry>
        </Group></Root></KeePassFile>
        """
        try fixture.write(toFile: base + "/fixture.xml", atomically: true, encoding: .utf8)
        // Through KeePassXC itself: its XML import into a database, then its XML export.
        XCTAssertEqual(try tool("/usr/bin/keepassxc-cli", ["import", "--set-password", base + "/fixture.xml", base + "/db.kdbx"], stdin: "dbpw\ndbpw\n", check: false).isEmpty, false)
        let xml = try tool("/usr/bin/keepassxc-cli", ["export", "--format", "xml", base + "/db.kdbx"], stdin: "dbpw\n")
        XCTAssertTrue(xml.contains("<KeePassFile>"), String(xml.prefix(200)))
        try xml.write(toFile: base + "/export.xml", atomically: true, encoding: .utf8)
        try assertMigrated(base + "/export.xml", cli, format: "KeePass 2 XML", card: false)
        XCTAssertTrue(unlocked(["show", "Visa", "--json"], cli).stdout.contains("\"hidden\":true"), "a protected string is a hidden field")
    }

    /// KeePassXC's own attachments (`attachment-import`), through its XML export (gzipped
    /// `Meta/Binaries` referred to by each entry): they arrive as the item's attachments, byte
    /// for byte (issue 57).
    func testKeePassXCAttachmentsArriveWithTheirItem() throws {
        let cli = harness()
        let base = cli.container + "/.."
        let database = base + "/files.kdbx"
        _ = try tool("/usr/bin/keepassxc-cli", ["db-create", "-p", database], stdin: "dbpw\ndbpw\n", check: false)
        _ = try tool("/usr/bin/keepassxc-cli", ["add", database, "server", "-u", "root"], stdin: "dbpw\n", check: false)
        let binary = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 >> 7) })
        try binary.write(to: URL(fileURLWithPath: base + "/key.bin"))
        try "Host home\n  User root\n".write(toFile: base + "/config.txt", atomically: true, encoding: .utf8)
        _ = try tool("/usr/bin/keepassxc-cli", ["attachment-import", database, "server", "key.bin", base + "/key.bin"], stdin: "dbpw\n")
        _ = try tool("/usr/bin/keepassxc-cli", ["attachment-import", database, "server", "ssh/config", base + "/config.txt"], stdin: "dbpw\n")
        let xml = try tool("/usr/bin/keepassxc-cli", ["export", "--format", "xml", database], stdin: "dbpw\n")
        XCTAssertTrue(xml.contains("Compressed=\"True\""), "KeePassXC compresses its binaries")
        try xml.write(toFile: base + "/files.xml", atomically: true, encoding: .utf8)
        let imported = unlocked(["import", base + "/files.xml"], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("Binary → attachments (2)"), imported.stderr + xml)
        let listed = unlocked(["attachment", "list", "server"], cli).stdout
        XCTAssertTrue(listed.contains("key.bin  4.8 KiB"), listed)
        XCTAssertTrue(listed.contains("ssh_config  22 bytes"), "a '/' in a KeePass name becomes '_': \(listed)")
        let out = base + "/key.out"
        XCTAssertEqual(unlocked(["attachment", "get", "server", "key.bin", "-o", out], cli).code, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), binary)
        XCTAssertEqual(unlocked(["attachment", "get", "server", "ssh_config"], cli).stdout, "Host home\n  User root\n")
        XCTAssertEqual(unlocked(["verify"], cli).code, 0)
    }

    /// 1Password's files (issue 57): a Document item's own file and a login's `file` field arrive
    /// as attachments byte for byte, from `files/<documentId>__<fileName>` as KeePassXC's 1PUX
    /// reader finds them; a file the archive lacks is named as dropped, the item kept.
    func testOnePassword1PUXFilesArriveAsAttachments() throws {
        let cli = harness()
        let base = cli.container + "/.."
        let pdf = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) })
        try pdf.write(to: URL(fileURLWithPath: base + "/codes.pdf"))
        try python("""
        import json, sys, zipfile
        base = sys.argv[1]
        item = lambda uuid, cat, title, details: {"uuid": uuid, "favIndex": 0, "createdAt": 1700000000, "updatedAt": 1700000100, "state": "active", "categoryUuid": cat, "details": details, "overview": {"title": title, "tags": []}}
        file_field = lambda doc, name, size: {"title": name, "value": {"file": {"fileName": name, "documentId": doc, "decryptedSize": size}}}
        items = [
          item("d1", "006", "Recovery codes", {"notesPlain": "printed too", "documentAttributes": {"fileName": "codes.pdf", "documentId": "doc1", "decryptedSize": 70000}}),
          item("l1", "001", "Server", {"loginFields": [{"value": "root", "designation": "username", "fieldType": "T"}], "sections": [{"title": "", "fields": [
              file_field("doc2", "id_ed25519.pub", 17), file_field("doc3", "gone.txt", 4), {"title": "host", "value": {"string": "home.example"}}]}]}),
        ]
        data = {"accounts": [{"attrs": {"name": "Me"}, "vaults": [{"attrs": {"name": "Private"}, "items": items}]}]}
        with zipfile.ZipFile(base + "/files.1pux", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("export.attributes", json.dumps({"version": 3}))
            z.writestr("export.data", json.dumps(data))
            z.write(base + "/codes.pdf", "files/doc1__codes.pdf")
            z.writestr("files/doc2__id_ed25519.pub", "ssh-ed25519 AAAA\\n")
        """, [base])
        let imported = unlocked(["import", base + "/files.1pux"], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("details.documentAttributes → attachments (1)"), imported.stderr)
        XCTAssertTrue(imported.stderr.contains("sections file → attachments (1)"), imported.stderr)
        XCTAssertTrue(imported.stderr.contains("'gone.txt'") && imported.stderr.contains("files/doc3__gone.txt"), imported.stderr)
        let out = base + "/codes.out"
        XCTAssertEqual(unlocked(["attachment", "get", "Recovery codes", "codes.pdf", "-o", out], cli).code, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), pdf)
        XCTAssertTrue(unlocked(["attachment", "list", "Recovery codes"], cli).stdout.contains("application/pdf"))
        XCTAssertEqual(unlocked(["attachment", "get", "Server", "id_ed25519.pub"], cli).stdout, "ssh-ed25519 AAAA\n")
        XCTAssertTrue(unlocked(["show", "Server"], cli).stdout.contains("host: home.example\n"), "the item's other fields are kept")
        XCTAssertEqual(unlocked(["verify"], cli).code, 0)
    }

    func testPassStoreThroughGPG() throws {
        let cli = harness()
        let base = cli.container + "/.."
        let gnupg = base + "/gnupg"
        try FileManager.default.createDirectory(atPath: gnupg, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        cli.environment["GNUPGHOME"] = gnupg
        cli.environment["PATH"] = "/usr/bin:/bin"
        defer { _ = try? tool("/usr/bin/gpgconf", ["--kill", "gpg-agent"], stdin: "", environment: ["GNUPGHOME": gnupg]) }
        let gpgEnvironment = ["GNUPGHOME": gnupg]
        _ = try tool("/usr/bin/gpg", ["--batch", "--passphrase", "", "--quick-gen-key", "Coffer Test <test@coffer.invalid>", "default", "default", "never"],
                     stdin: "", environment: gpgEnvironment)
        let store = base + "/password-store"
        func insert(_ path: String, _ text: String) throws {
            let file = store + "/" + path + ".gpg"
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = try tool("/usr/bin/gpg", ["--batch", "--yes", "-r", "test@coffer.invalid", "-e", "-o", file], stdin: text, environment: gpgEnvironment)
        }
        try insert("Work/GitLab", "pw1\nuser: me\nurl: https://gitlab.com/users/sign_in\nrecovery: R3C0\n\(otp)\n")
        try insert("my note", "\nsecret text\n")
        try insert("Work/github.com/alice", "pw2\n")
        try assertMigrated(store, cli, format: "pass store", card: false, loginName: "Work/GitLab")  // pass names an entry by its path
        let site = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Work/github.com/alice", "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual(site["user"] as? String, "alice", "the file name under a host directory is the user")
        XCTAssertEqual((site["serviceIdentifiers"] as? [[String: Any]])?.first?["identifier"] as? String, "github.com")

        // A link out of the store, or a file gpg cannot decrypt, stops the import: nothing lands.
        let hostile = harness()
        hostile.environment["GNUPGHOME"] = gnupg
        hostile.environment["PATH"] = "/usr/bin:/bin"
        try FileManager.default.createSymbolicLink(atPath: store + "/escape.gpg", withDestinationPath: "/etc/passwd")
        let linked = unlocked(["import", store], hostile)
        XCTAssertEqual(linked.code, 65)
        XCTAssertTrue(linked.stderr.contains("escape.gpg") && linked.stderr.contains("symbolic link"), linked.stderr)
        try FileManager.default.removeItem(atPath: store + "/escape.gpg")
        try Data("not encrypted".utf8).write(to: URL(fileURLWithPath: store + "/broken.gpg"))
        let broken = unlocked(["import", store], hostile)
        XCTAssertEqual(broken.code, 71, "a helper program failed (SPEC.md §10)")
        XCTAssertTrue(broken.stderr.contains("broken.gpg") && broken.stderr.contains("gpg could not read it"), broken.stderr)
        XCTAssertEqual(unlocked(["list", "--json"], hostile).stdout, "[]\n", "nothing half-imported")
        // Without gpg on PATH: a program it needs is missing, 69, with the package that has it.
        hostile.environment["PATH"] = cli.container + "-empty-path"
        try FileManager.default.createDirectory(atPath: cli.container + "-empty-path", withIntermediateDirectories: true)
        let missing = unlocked(["import", store], hostile)
        XCTAssertEqual(missing.code, 69, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("gpg is not installed (apt install gnupg)"), missing.stderr)
    }

    func testHostile1PUXArchivesAreRefused() throws {
        let cli = harness()
        let base = cli.container + "/.."
        try python("""
        import sys, zipfile
        with zipfile.ZipFile(sys.argv[1] + "/bomb.1pux", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("export.data", b"{" + b" " * (70 << 20) + b"}")
        with zipfile.ZipFile(sys.argv[1] + "/climb.1pux", "w") as z:
            z.writestr("../../etc/cron.d/evil", "x")
            z.writestr("export.data", '{"accounts": []}')
        """, [base])
        let bomb = unlocked(["import", base + "/bomb.1pux"], cli)
        XCTAssertEqual(bomb.code, 65)
        XCTAssertTrue(bomb.stderr.contains("inflate"), bomb.stderr)
        let climb = unlocked(["import", base + "/climb.1pux"], cli)
        XCTAssertEqual(climb.code, 65)
        XCTAssertTrue(climb.stderr.contains("leaves the archive"), climb.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/cron.d/evil"))
    }

    /// `export --format json` → `import` keeps every member of every item exactly.
    func testExportThenImportRoundTripsEveryMember() throws {
        let cli = harness()
        XCTAssertEqual(cli.run(["add", "gitlab.com", "me", "--name", "GitLab", "--tag", "Work", "--tag", "favorite", "--otp", "--match", "site",
                                "--password-stdin"], stdin: "\(CLIHarness.master)\npw1\n\(otp)\n").code, 0)
        XCTAssertEqual(cli.run(["edit", "GitLab", "--new-password", "--add-service", "https://gitlab.example/login", "--password-stdin"],
                               stdin: "\(CLIHarness.master)\npw2\n").code, 0)
        XCTAssertEqual(unlocked(["add", "--name", "my note", "--kind", "note"], cli).code, 0)
        XCTAssertEqual(cli.run(["edit", "my note", "--password-stdin"], stdin: "\(CLIHarness.master)\n\nname: my note\nkind: note\nuser: \n\nsecret text\nmulti\nline\n").code, 0)
        // Custom fields (one hidden) through the library, which the CLI does not edit yet.
        let vault = try Vault.open(GroupContainer(path: cli.container), configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, stateDirectory: cli.environment["XDG_STATE_HOME"]! + "/coffer"))
        try vault.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))
        let id = try XCTUnwrap(vault.identityStore.items(named: "GitLab").first?.recordID)
        try vault.updateRecord(withID: id) { $0.fields = [RecordField(name: "recovery", value: "R3C0", hidden: true), RecordField(name: "team", value: "core")] }
        let original = try vault.allRecords()

        let export = unlocked(["export", "--format", "json", "--plaintext"], cli)
        XCTAssertEqual(export.code, 0, export.stderr)
        let other = harness()
        let file = other.container + "/../export.json"
        try export.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", file], other)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        let copy = try Vault.open(GroupContainer(path: other.container), configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, stateDirectory: other.environment["XDG_STATE_HOME"]! + "/coffer"))
        try copy.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))
        let copied = try copy.allRecords()
        XCTAssertEqual(copied.count, original.count)
        for record in original {
            let twin = try XCTUnwrap(copied.first { $0.name == record.name })
            XCTAssertEqual(RecordDraft(twin), RecordDraft(record), "every member of '\(record.name)'")
            XCTAssertEqual(twin.created, record.created)
            XCTAssertEqual(twin.modified, record.modified)
            XCTAssertEqual(twin.passwordHistory, record.passwordHistory)
        }
    }

    // MARK: Tools

    private func python(_ script: String, _ arguments: [String]) throws {
        _ = try tool("/usr/bin/python3", ["-c", script] + arguments, stdin: "")
    }

    @discardableResult
    private func tool(_ path: String, _ arguments: [String], stdin: String, environment: [String: String]? = nil, check: Bool = true) throws -> String {
        let result = try runTool(path, arguments, stdin: stdin, environment: environment)
        if check { XCTAssertEqual(result.code, 0, "\(path) \(arguments.prefix(3)): \(result.stderr)") }
        return result.stdout + (check ? "" : result.stderr)
    }
}
