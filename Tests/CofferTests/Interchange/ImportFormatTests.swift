import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferInterchange
import Foundation
import XCTest

/// Every export format, the report of what became of each column, messy rows, the duplicate rule
/// and hostile input (SPEC.md §12).
final class ImportFormatTests: XCTestCase {
    func read(_ text: String, _ format: ImportFormat? = nil) throws -> (items: [ImportedItem], report: ImportReport) {
        try ItemImporter.read(text, format: format)
    }

    func dropped(_ report: ImportReport) -> [String] { report.members.filter { $0.destination == nil }.map(\.source) }

    func testEachCSVExporterIsRecognisedAndRead() throws {
        let samples: [(ImportFormat, String)] = [
            (.chrome, "name,url,username,password,note\nExample,https://example.com/login,alice,pw1,\"a note, with comma\"\n"),
            (.firefox, "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n\"https://example.com\",\"alice\",\"pw1\",,\"https://example.com\",\"{x}\",\"1700000000000\",\"1700000001000\",\"1700000002000\"\n"),
            (.bitwarden, "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\nWork,1,login,Example,\"multi\nline\",\"pin: 1234\",0,https://example.com,alice,pw1,JBSWY3DPEHPK3PXP\n"),
            (.keepassxc, "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n\"Root/Work\",\"Example\",\"alice\",\"pw1\",\"https://example.com\",\"\",\"otpauth://totp/x?secret=JBSWY3DPEHPK3PXP\",\"0\",\"2024-01-02T03:04:05Z\",\"2024-01-01T00:00:00Z\"\n"),
            (.safari, "Title,URL,Username,Password,Notes,OTPAuth\nexample.com (alice),https://example.com/,alice,pw1,,otpauth://totp/x?secret=JBSWY3DPEHPK3PXP\n"),
            (.onePassword, "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\nExample,https://example.com,alice,pw1,,true,false,dev;ops,\n"),
        ]
        for (expected, text) in samples {
            let (items, report) = try read(text)
            XCTAssertEqual(report.format, expected, text)
            XCTAssertEqual(items.count, 1, "\(expected)")
            XCTAssertEqual(items.first?.draft.user, "alice", "\(expected)")
            XCTAssertEqual(items.first?.draft.password, "pw1", "\(expected)")
            XCTAssertEqual(items.first?.draft.serviceIdentifiers.first?.type, .URL, "\(expected)")
            XCTAssertEqual(dropped(report).filter { $0 != "timeLastUsed" && $0 != "guid" }, [], "\(expected): nothing of value dropped")
        }
        let bitwarden = try read(samples[2].1).items[0].draft
        XCTAssertEqual(bitwarden.tags, ["Work", "favorite"])
        XCTAssertEqual(bitwarden.fields, [RecordField(name: "pin", value: "1234")])
        XCTAssertEqual(bitwarden.otp, "otpauth://totp/alice?secret=JBSWY3DPEHPK3PXP", "a bare secret becomes a URI")
        XCTAssertEqual(try read(samples[3].1).items[0].draft.tags, ["Work"], "the group below the root")
        XCTAssertEqual(try read(samples[1].1).items[0].draft.created, Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(try read(samples[5].1).items[0].draft.tags, ["dev", "ops", "favorite"])
    }

    /// Exports are messy: a short row under a longer header, extra fields, an unknown column, a
    /// byte-order mark and CRLF are read and reported; an item without a URL has no service.
    func testMessyCSVIsImportedAndReported() throws {
        let text = "\u{FEFF}name,url,username,password,note,nickname\r\nA,https://a.example,u,p1,,ace\r\nB,,u2,p2\r\nC,https://c.example,u3,p3,,,surplus\r\n"
        let (items, report) = try read(text)
        XCTAssertEqual(items.map(\.draft.password), ["p1", "p2", "p3"])
        XCTAssertEqual(items[0].draft.fields, [RecordField(name: "nickname", value: "ace")], "an unknown column becomes a field")
        XCTAssertEqual(items[1].draft.serviceIdentifiers, [], "no URL: a named item, never a fake domain")
        XCTAssertEqual(items[1].draft.name, "B")
        XCTAssertEqual(items[2].draft.fields, [RecordField(name: "column 7", value: "surplus")])
        XCTAssertTrue(report.notices.contains { $0.hasPrefix("line 3: 4 fields where the header has 6") }, "\(report.notices)")
        XCTAssertTrue(report.notices.contains { $0.hasPrefix("line 4: 1 fields beyond the header") }, "\(report.notices)")
    }

    func testBitwardenJSONKeepsEveryItemType() throws {
        let json = #"""
        {"encrypted":false,"folders":[{"id":"f","name":"Work"}],"items":[
         {"type":1,"name":"GitLab","folderId":"f","favorite":true,"notes":"n","fields":[{"name":"recovery","value":"R3C0","type":1},{"name":"team","value":"core","type":0},{"name":"u","value":null,"type":3,"linkedId":100}],
          "login":{"username":"me","password":"pw","totp":"otpauth://totp/GitLab:me?secret=JBSWY3DPEHPK3PXP","uris":[{"uri":"https://gitlab.com/login","match":null},{"uri":"gitlab.example"}]},
          "passwordHistory":[{"lastUsedDate":"2024-01-02T03:04:05.678Z","password":"older"},{"lastUsedDate":"2024-03-02T03:04:05.678Z","password":"old"}],
          "creationDate":"2024-01-01T00:00:00.000Z","revisionDate":"2024-04-01T00:00:00.000Z"},
         {"type":2,"name":"my note","notes":"text","secureNote":{"type":0}},
         {"type":3,"name":"Visa","card":{"cardholderName":"Me","number":"4111111111111111","code":"123","expMonth":"12","expYear":"2030"}},
         {"type":4,"name":"Me","identity":{"firstName":"Ada","ssn":"123-45-6789"}},
         {"type":5,"name":"server","sshKey":{"privateKey":"-----BEGIN OPENSSH PRIVATE KEY-----","publicKey":"ssh-ed25519 AAAA"}}]}
        """#
        let (items, report) = try read(json)
        XCTAssertEqual(report.format, .bitwardenJSON)
        XCTAssertEqual(items.map(\.draft.kind), [.login, .note, .card, .identity, .sshKey])
        let login = items[0].draft
        XCTAssertEqual(login.name, "GitLab")
        XCTAssertEqual(login.tags, ["Work", "favorite"])
        XCTAssertEqual(login.fields, [
            RecordField(name: "recovery", value: "R3C0", hidden: true), RecordField(name: "team", value: "core"),
            RecordField(name: "u", value: "(linked to the item's username)"),
        ])
        XCTAssertEqual(login.serviceIdentifiers.map(\.identifier), ["https://gitlab.com/login", "gitlab.example"])
        XCTAssertEqual(login.passwordHistory.map(\.password), ["old", "older"], "newest first")
        XCTAssertNotNil(login.otp)
        XCTAssertEqual(items[1].draft.serviceIdentifiers, [])
        XCTAssertEqual(items[2].draft.card, CardMember(cardholder: "Me", number: "4111111111111111", expiryMonth: 12, expiryYear: 2030, securityCode: "123"),
                       "a card's members (SPEC.md §6.8), not fields")
        XCTAssertEqual(items[2].draft.fields, [])
        XCTAssertEqual(items[3].draft.identity, IdentityMember(givenName: "Ada", nationalIdentifier: "123-45-6789"))
        XCTAssertEqual(items[4].draft.fields.first { $0.name == "privateKey" }?.hidden, true)
        XCTAssertEqual(dropped(report), [], "a linked field is kept naming its member; nothing is dropped")
        XCTAssertThrows(try read(#"{"encrypted":true,"items":[]}"#)) { "\($0)".contains("encrypted") }
    }

    /// What a card's or identity's member cannot hold stays a field, never lost: a month 13, a
    /// country that is none; a two-digit year is 20YY.
    func testBitwardenCardAndIdentityValuesOutOfTheRulesStayFields() throws {
        let json = #"""
        {"encrypted":false,"items":[
         {"type":3,"name":"Odd","card":{"number":"4111 1111 1111 1111","expMonth":"13","expYear":"2030"}},
         {"type":3,"name":"Short year","card":{"expMonth":"7","expYear":"29"}},
         {"type":4,"name":"Far","identity":{"country":"Atlantis","address1":"1 Sea Rd"}}]}
        """#
        let items = try read(json).items.map(\.draft)
        XCTAssertEqual(items[0].card, CardMember(number: "4111 1111 1111 1111"), "an export's number as it was written")
        XCTAssertEqual(items[0].fields, [RecordField(name: "expMonth", value: "13"), RecordField(name: "expYear", value: "2030")])
        XCTAssertEqual(items[1].card, CardMember(expiryMonth: 7, expiryYear: 2029))
        XCTAssertEqual(items[2].identity, IdentityMember(addressLines: ["1 Sea Rd"]))
        XCTAssertEqual(items[2].fields, [RecordField(name: "country", value: "Atlantis")])
    }

    /// Another exporter's CXF card and identity credentials (no `coffer-item` extension): each a
    /// member where Coffer has one, a field `TYPE.MEMBER` where it has none.
    func testCXFCardAndIdentityCredentialsFromAnotherExporter() throws {
        func field(_ value: String, _ type: String = "string") -> String { #"{"fieldType":"\#(type)","value":"\#(value)"}"# }
        let street = field(#"1 Main St\nApt 2"#)
        let json = #"""
        {"version":{"major":1,"minor":0},"exporterRpId":"other.example","exporterDisplayName":"Other","timestamp":0,"accounts":[{"id":"AA","username":"","email":"","items":[
         {"id":"AQ","title":"Visa","creationAt":0,"modifiedAt":0,"credentials":[{"type":"credit-card","number":\#(field("4111111111111111", "concealed-string")),"fullName":\#(field("Me")),
           "expiryDate":\#(field("2030-12", "year-month")),"verificationNumber":\#(field("123", "concealed-string"))}]},
         {"id":"Ag","title":"Home","creationAt":0,"modifiedAt":0,"credentials":[{"type":"person-name","given":\#(field("Ann")),"surname":\#(field("Smith")),"generation":\#(field("Jr"))},
           {"type":"address","streetAddress":\#(street),"city":\#(field("Springfield")),"territory":\#(field("US-IL", "subdivision-code")),"country":\#(field("US", "country-code"))},
           {"type":"passport","passportNumber":\#(field("P1")),"birthDate":\#(field("1980-01-01", "date"))}]}]}]}
        """#
        let (items, report) = try read(json)
        XCTAssertEqual(report.format, .cxf)
        XCTAssertEqual(items.map(\.draft.kind), [.card, .identity])
        XCTAssertEqual(items[0].draft.card, CardMember(cardholder: "Me", number: "4111111111111111", expiryMonth: 12, expiryYear: 2030, securityCode: "123"))
        XCTAssertEqual(items[1].draft.identity, IdentityMember(
            givenName: "Ann", familyName: "Smith", addressLines: ["1 Main St", "Apt 2"], city: "Springfield", region: "US-IL", country: "US", passportNumber: "P1"))
        XCTAssertEqual(items[1].draft.fields, [RecordField(name: "person-name.generation", value: "Jr"), RecordField(name: "passport.birthDate", value: "1980-01-01")])
        XCTAssertEqual(dropped(report), [])
    }

    /// KeePassXC has no card or identity entries; people keep them as custom strings. Named as
    /// a card's or an identity's members, they become those members (SPEC.md §12); a login with a
    /// "Card Number" string, or a value the rules refuse, keeps its fields.
    func testKeePassCustomStringsOfACardAndAnIdentityBecomeTheirMembers() throws {
        func entry(_ strings: [(String, String)]) -> String {
            "<Entry>" + strings.map { "<String><Key>\($0.0)</Key><Value>\($0.1)</Value></String>" }.joined() + "</Entry>"
        }
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <KeePassFile><Root><Group><Name>Root</Name>
          \(entry([("Title", "Visa"), ("Card Number", "4111 1111 1111 1111"), ("CVV", "123"), ("Expiry", "07/29"), ("Cardholder", "Ann"), ("Bank", "Example Bank")]))
          \(entry([("Title", "Home"), ("First Name", "Ann"), ("Nachname", "Beispiel"), ("Straße", "Hauptstr. 1"), ("PLZ", "10115"), ("Stadt", "Berlin"), ("Land", "Deutschland"), ("E-Mail", "ann@example.com")]))
          \(entry([("Title", "Bank"), ("UserName", "ann"), ("Password", "pw"), ("URL", "https://bank.example"), ("Card Number", "4111111111111111")]))
          \(entry([("Title", "Odd"), ("Card Number", "not a number"), ("City", "Oslo")]))
        </Group></Root></KeePassFile>
        """
        let (items, report) = try read(xml)
        let drafts = items.map(\.draft)
        XCTAssertEqual(drafts.map(\.kind), [.card, .identity, .login, .note])
        XCTAssertEqual(drafts[0].card, CardMember(cardholder: "Ann", number: "4111111111111111", expiryMonth: 7, expiryYear: 2029, securityCode: "123"))
        XCTAssertEqual(drafts[0].fields, [RecordField(name: "Bank", value: "Example Bank")], "what is no member stays a field")
        XCTAssertEqual(drafts[1].identity, IdentityMember(
            givenName: "Ann", familyName: "Beispiel", addressLines: ["Hauptstr. 1"], city: "Berlin", postalCode: "10115", email: "ann@example.com"))
        XCTAssertEqual(drafts[1].fields, [RecordField(name: "Land", value: "Deutschland")], "a country name iso-codes has only in English stays a field")
        XCTAssertNil(drafts[2].card, "a login's card number is its field")
        XCTAssertEqual(drafts[2].fields.map(\.name), ["Card Number"])
        XCTAssertNil(drafts[3].card)
        XCTAssertEqual(drafts[3].fields.map(\.name), ["Card Number", "City"])
        XCTAssertEqual(dropped(report), [])
    }

    func testKeePassXMLGroupsProtectedStringsHistoryAndOneTimeCodes() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <KeePassFile><Root><Group><Name>Root</Name>
          <Group><Name>Work</Name>
            <Entry><Tags>dev;ops</Tags><Times><CreationTime>2024-01-01T00:00:00Z</CreationTime><LastModificationTime>2024-02-01T00:00:00Z</LastModificationTime></Times>
              <String><Key>Title</Key><Value>GitLab</Value></String><String><Key>UserName</Key><Value>me</Value></String>
              <String><Key>Password</Key><Value ProtectInMemory="True">pw</Value></String><String><Key>URL</Key><Value>https://gitlab.com</Value></String>
              <String><Key>Notes</Key><Value>n &amp; m</Value></String>
              <String><Key>recovery</Key><Value ProtectInMemory="True">R3C0</Value></String><String><Key>team</Key><Value>core</Value></String>
              <String><Key>TimeOtp-Secret-Base32</Key><Value ProtectInMemory="True">JBSWY3DPEHPK3PXP</Value></String>
              <String><Key>TimeOtp-Length</Key><Value>8</Value></String><String><Key>TimeOtp-Algorithm</Key><Value>HMAC-SHA-256</Value></String>
              <History><Entry><Times><LastModificationTime>2023-06-01T00:00:00Z</LastModificationTime></Times><String><Key>Password</Key><Value>old</Value></String></Entry></History>
            </Entry>
          </Group>
          <Entry><String><Key>Title</Key><Value>Wi-Fi</Value></String><String><Key>Notes</Key><Value><![CDATA[pass <phrase>]]></Value></String></Entry>
        </Group></Root></KeePassFile>
        """
        let (items, report) = try read(xml)
        XCTAssertEqual(report.format, .keepassXML)
        XCTAssertEqual(items.map(\.draft.name), ["Wi-Fi", "GitLab"], "the root group's entries, then each group's")
        let login = items[1].draft
        XCTAssertEqual(login.tags, ["Work", "dev", "ops"])
        XCTAssertEqual(login.notes, "n & m")
        XCTAssertEqual(login.fields, [RecordField(name: "recovery", value: "R3C0", hidden: true), RecordField(name: "team", value: "core")])
        XCTAssertEqual(login.passwordHistory.map(\.password), ["old"])
        let code = try OneTimeCodeParameters(parsing: XCTUnwrap(login.otp))
        XCTAssertTrue(code.digits == 8 && code.algorithm == .sha256)
        XCTAssertEqual(login.created, UTCTimestamp.parse("2024-01-01T00:00:00Z"))
        XCTAssertEqual(items[0].draft.notes, "pass <phrase>")
        XCTAssertEqual(items[0].draft.tags, [], "an entry of the root group has no tag")
        XCTAssertEqual(dropped(report), [])
    }

    /// Hostile input gets a clear error naming where, and nothing is returned to import.
    func testHostileInputIsRefusedNamingTheItemOrLine() throws {
        let laughs = """
        <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
        <KeePassFile><Root><Group><Name>&lol2;</Name></Group></Root></KeePassFile>
        """
        XCTAssertThrows(try read(laughs)) { "\($0)".contains("document type declaration") }
        XCTAssertThrows(try read("<KeePassFile><Root><Group><Entry></Group></Root></KeePassFile>")) { "\($0)".contains("line 1") }
        let encrypted = "<KeePassFile><Root><Group><Entry><String><Key>Password</Key><Value Protected=\"True\">AAAA</Value></String></Entry></Group></Root></KeePassFile>"
        XCTAssertThrows(try read(encrypted)) { "\($0)".contains("encrypted") }
        let header = "name,url,username,password,note\n"
        for (row, word) in [("A,https://a.example,u,\"p,\n", "never closed"), ("A,https://a.ex\"ample,u,p,\n", "quote")] {
            XCTAssertThrows(try read(header + row)) { error in "\(error)".contains("line 2") && "\(error)".contains(word) }
        }
        let bitwarden = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        for otp in ["otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=99", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=0", "JBSWY3D=PEHPK3PX"] {
            // One bad value never stops a migration: kept whole as a hidden field, reported
            // without the secret.
            let (items, report) = try read(bitwarden + ",,login,GitLab,,,0,https://gitlab.com,me,pw,\(otp)\n")
            XCTAssertNil(items[0].draft.otp)
            XCTAssertEqual(items[0].draft.fields, [RecordField(name: "one-time code (unreadable)", value: otp, hidden: true)])
            XCTAssertTrue(report.notices.contains { $0.hasPrefix("line 2") && !$0.contains("JBSWY3D") }, "\(report.notices)")
        }
        let huge = String(repeating: "x", count: 1 << 20)
        XCTAssertThrows(try read(header + "A,https://a.example,u,p,\(huge)\n")) { "\($0)".contains("line 2") && "\($0)".contains("KiB") }
        XCTAssertThrows(try read("what,is,this\n1,2,3\n")) { $0 as? ImportError == .unknownFormat }
    }

    /// Exact copies are skipped; items sharing service and user but differing are all kept.
    func testTheDuplicateRule() throws {
        let text = "name,url,username,password,note\nA,https://a.example,u,p1,\nA,https://a.example,u,p1,\nA,https://a.example,u,p2,\n"
        var (items, report) = try read(text)
        let vault = try Fixture.vault()
        let stored = try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://a.example")], user: "u", password: "p0", name: "A"))
        ImportedItem.removeDuplicates(&items, existing: [stored], report: &report)
        XCTAssertEqual(items.map(\.draft.password), ["p1", "p2"])
        XCTAssertEqual(report.skippedDuplicates, 1)
        XCTAssertEqual(report.possibleDuplicates.count, 2, "\(report.possibleDuplicates)")
        var again = report
        ImportedItem.removeDuplicates(&items, existing: try vault.add(items.map(\.draft)), report: &again)
        XCTAssertEqual(items, [])
    }

    /// Items that hash alike (the same site, user, password and name) but differ elsewhere are
    /// told apart, a later copy of any of them is skipped, and the kept ones keep their order.
    func testDuplicatesThatHashAlikeAreToldApart() throws {
        let text = "name,url,username,password,note\nA,https://a.example,u,p,one\nA,https://a.example,u,p,two\n"
            + "B,https://b.example,v,q,\nA,https://a.example,u,p,two\nA,https://a.example,u,p,three\nA,https://a.example,u,p,one\n"
        var (items, report) = try read(text)
        let vault = try Fixture.vault()
        let stored = try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://a.example")], user: "u", password: "p", notes: "three", name: "A"))
        ImportedItem.removeDuplicates(&items, existing: [stored], report: &report)
        XCTAssertEqual(items.map(\.draft.notes), ["one", "two", ""])
        XCTAssertEqual(items.map(\.origin), ["line 2", "line 3", "line 4"])
        XCTAssertEqual(report.skippedDuplicates, 3)
    }
}
