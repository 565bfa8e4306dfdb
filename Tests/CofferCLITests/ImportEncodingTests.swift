import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// Import never changes a byte of a secret (SPEC.md §12): input that is not valid in its
/// encoding is refused with its line and column and nothing is imported; a named encoding is
/// converted exactly.
final class ImportEncodingTests: XCTestCase {
    let header = Array("name,url,username,password,note\n".utf8)

    func importing(_ bytes: [UInt8], _ extra: [String] = []) throws -> (RunResult, CLIHarness) {
        let cli = CLIHarness()
        cli.initVault()
        let file = cli.container + "-export.csv"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return (cli.run(["import", file, "--password-stdin"] + extra, stdin: CLIHarness.master + "\n"), cli)
    }

    func password(_ cli: CLIHarness, _ service: String) throws -> String? {
        let result = cli.run(["fill", service, "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["password"] as? String
    }

    func assertRefused(_ result: RunResult, _ cli: CLIHarness, line: Int, _ label: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertEqual(result.code, 65, "\(label): \(result.stderr)", file: file, line: lineNumber)
        XCTAssertTrue(result.stderr.contains("line \(line): column"), "\(label): \(result.stderr)", file: file, line: lineNumber)
        XCTAssertTrue(result.stderr.contains("nothing was imported"), label, file: file, line: lineNumber)
        XCTAssertEqual(cli.run(["list", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout, "", "\(label): half imported",
                       file: file, line: lineNumber)
    }

    func testTheIssuesLatinOnePasswordIsRefusedThenImportedExactlyWhenNamed() throws {
        let row = header + Array("ok,https://ok.example.com,u,fine,\n".utf8) + Array("x,https://x.example.com,u,caf".utf8) + [0xE9] + Array(",\n".utf8)
        let (refused, cli) = try importing(row)
        assertRefused(refused, cli, line: 3, "latin-1 as UTF-8")
        XCTAssertFalse(refused.stderr.contains("caf"), "the error never quotes the value")

        let (latin, latinCLI) = try importing(row, ["--encoding", "latin1"])
        XCTAssertEqual(latin.code, 0, latin.stderr)
        XCTAssertEqual(try password(latinCLI, "x.example.com"), "café")
    }

    func testInvalidUTF8InEveryColumnOverlongSurrogatesAndNUL() throws {
        let bad: [(String, [UInt8])] = [
            ("a lone continuation byte", [0x80]), ("a truncated sequence", [0xE2, 0x82]), ("overlong '/'", [0xC0, 0xAF]),
            ("overlong NUL", [0xC0, 0x80]), ("an encoded surrogate", [0xED, 0xA0, 0x80]), ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
            ("NUL", [0x00]),
        ]
        for column in 0..<5 {
            for (label, bytes) in bad {
                var fields = ["n", "https://e.example.com", "u", "p", "note"].map { Array($0.utf8) }
                fields[column] += bytes
                let row = header + Array(fields.joined(separator: [UInt8(ascii: ",")])) + [0x0A]
                let (result, cli) = try importing(row)
                assertRefused(result, cli, line: 2, "\(label) in column \(column + 1)")
            }
        }
    }

    func testByteOrderMarkWindows1252AndUTF16() throws {
        let (bom, bomCLI) = try importing([0xEF, 0xBB, 0xBF] + header + Array("b,https://b.example.com,u,pässwörd,\n".utf8))
        XCTAssertEqual(bom.code, 0, bom.stderr)
        XCTAssertEqual(try password(bomCLI, "b.example.com"), "pässwörd")

        let cp1252 = header + Array("w,https://w.example.com,u,".utf8) + [0x80, 0x9C, 0xE9] + Array(",\n".utf8)
        let (windows, windowsCLI) = try importing(cp1252, ["--encoding", "windows-1252"])
        XCTAssertEqual(windows.code, 0, windows.stderr)
        XCTAssertEqual(try password(windowsCLI, "w.example.com"), "€œé")
        let (undefined, undefinedCLI) = try importing(header + Array("w,https://w.example.com,u,".utf8) + [0x81] + Array(",\n".utf8),
                                                      ["--encoding", "windows-1252"])
        assertRefused(undefined, undefinedCLI, line: 2, "an undefined windows-1252 byte")

        let text = "name,url,username,password,note\nv,https://v.example.com,u,p😀ss,\n"
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let (sixteen, sixteenCLI) = try importing(utf16, ["--encoding", "utf-16"])
        XCTAssertEqual(sixteen.code, 0, sixteen.stderr)
        XCTAssertEqual(try password(sixteenCLI, "v.example.com"), "p😀ss")
        XCTAssertEqual(try importing(header, ["--encoding", "ebcdic"]).0.code, 64)
    }
}
