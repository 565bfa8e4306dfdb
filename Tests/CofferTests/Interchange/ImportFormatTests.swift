@testable import Coffer
import XCTest

final class ImportFormatTests: XCTestCase {
    func parse(_ text: String, _ format: ImportFormat? = nil) throws -> (ImportFormat, [ImportedCredential]) {
        try CredentialImporter.parse(text, format: format)
    }

    func testEachExporterIsRecognisedAndRead() throws {
        let samples: [(ImportFormat, String)] = [
            (.chrome, "name,url,username,password,note\nExample,https://example.com/login,alice,pw1,\"a note, with comma\"\n"),
            (.firefox, "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n\"https://example.com\",\"alice\",\"pw1\",,\"https://example.com\",\"{x}\",\"1\",\"2\",\"3\"\n"),
            (.bitwarden, "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Example,\"multi\nline\",,0,https://example.com,alice,pw1,\n"),
            (.keepassxc, "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n\"Root\",\"Example\",\"alice\",\"pw1\",\"https://example.com\",\"\",\"\",\"0\",\"x\",\"y\"\n"),
            (.apple, "Title,URL,Username,Password,Notes,OTPAuth\nexample.com (alice),https://example.com/,alice,pw1,,\n"),
            (.onePassword, "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\nExample,https://example.com,alice,pw1,,false,false,,\n"),
        ]
        for (expected, text) in samples {
            let (format, credentials) = try parse(text)
            XCTAssertEqual(format, expected, text)
            XCTAssertEqual(credentials.count, 1, "\(expected)")
            XCTAssertEqual(credentials.first?.draft.user, "alice", "\(expected)")
            XCTAssertEqual(credentials.first?.draft.password, "pw1", "\(expected)")
            XCTAssertEqual(credentials.first?.draft.serviceIdentifiers.first?.type, .URL, "\(expected)")
        }
        XCTAssertEqual(try parse(samples[2].1).1.first?.draft.notes, "multi\nline")
        XCTAssertEqual(try parse(samples[0].1).1.first?.draft.notes, "a note, with comma")
    }

    func testBitwardenJSON() throws {
        let json = #"{"encrypted":false,"items":[{"type":1,"name":"Ex","notes":"n","login":{"username":"zoë","password":"p\"w","uris":[{"uri":"https://a.example"},{"uri":"https://b.example"}]}},{"type":2,"name":"a secure note"}]}"#
        let (format, credentials) = try parse(json)
        XCTAssertEqual(format, .bitwardenJSON)
        XCTAssertEqual(credentials.count, 1)
        XCTAssertEqual(credentials[0].draft.serviceIdentifiers.map(\.identifier), ["https://a.example", "https://b.example"])
        XCTAssertEqual(credentials[0].draft.password, "p\"w")
        XCTAssertThrows(try parse(#"{"encrypted":true,"items":[]}"#)) { _ in true }
    }

    func testBrokenRowsNameTheirLine() {
        let wrongCount = "name,url,username,password,note\nA,https://a.example,u,p,\nB,https://b.example,u\n"
        XCTAssertThrows(try parse(wrongCount)) { $0 as? ImportError == .malformed(line: 3, reason: "3 fields where the header has 5") }
        let unterminated = "name,url,username,password,note\nA,https://a.example,u,\"p,\n"
        XCTAssertThrows(try parse(unterminated)) { $0 as? ImportError == .malformed(line: 2, reason: "a quoted field is never closed") }
        let stray = "name,url,username,password,note\nA,https://a.ex\"ample,u,p,\n"
        XCTAssertThrows(try parse(stray)) { if case ImportError.malformed(2, _) = $0 { return true }; return false }
        XCTAssertThrows(try parse("what,is,this\n1,2,3\n")) { $0 as? ImportError == .unknownFormat }
    }

    func testCSVQuotingRoundTrips() throws {
        let fields = ["plain", "with, comma", "with \"quote\"", "multi\nline", "ünïcode", ""]
        let line = fields.map(CSV.quote).joined(separator: ",")
        XCTAssertEqual(try CSV.parse(line + "\n").first?.fields, fields)
    }
}
