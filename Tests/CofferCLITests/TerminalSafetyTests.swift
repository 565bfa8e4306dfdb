import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// Nothing a vault holds can drive the terminal (issue 51, item 3): names and users with escape
/// sequences (window title, OSC 52 clipboard, clear screen) and line breaks, from a CSV import or
/// a Secret Service label, are escaped in every human-readable output; a line break never forges
/// a row or a completion candidate; JSON stays exact.
final class TerminalSafetyTests: XCTestCase {
    static let title = "evil\u{1B}]0;pwned\u{07}"
    static let clipboard = "clip\u{1B}]52;c;aGVsbG8=\u{07}"
    static let forged = "real.example\nfake.example.com/admin"

    func hostileVault() throws -> CLIHarness {
        let cli = CLIHarness()
        cli.initVault()
        let imported = cli.run(["import", try hostileCSV(beside: cli), "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(imported.code, 0, imported.stderr)
        return cli
    }

    /// A CSV export whose names and users hold escape sequences and a line break.
    func hostileCSV(beside cli: CLIHarness) throws -> String {
        let csv = cli.container + "-hostile.csv"
        var text = "name,url,username,password,note\n"
        text += "\"\(Self.title)\",https://title.example,\"user\u{1B}[2J\",pw1,\n"
        text += "\"\(Self.clipboard)\",https://clip.example,bob,pw2,\n"
        text += "\"\(Self.forged)\",https://row.example,\"\u{9B}31m\",pw3,\n"
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        return csv
    }

    /// No ESC, BEL or C1 byte reaches the output, and no line break except between rows.
    func assertSafe(_ output: String, rows: Int? = nil, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(output.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || $0.value == 0x7F || (0x80...0x9F).contains($0.value) },
                       "\(context): a control character reached the terminal: \(output.debugDescription)", file: file, line: line)
        if let rows { XCTAssertEqual(output.split(separator: "\n").count, rows, "\(context): \(output.debugDescription)", file: file, line: line) }
    }

    func testListSearchShowAuditAndErrorsEscapeWhatTheVaultHolds() throws {
        let cli = try hostileVault()
        let master = CLIHarness.master + "\n"
        assertSafe(cli.run(["list"]).stdout, rows: 3, "list")
        XCTAssertTrue(cli.run(["list"]).stdout.contains("evil\\x1B]0;pwned\\x07"), cli.run(["list"]).stdout)
        assertSafe(cli.run(["list", "--format", "{name} {user} {path}"]).stdout, rows: 3, "list --format")
        assertSafe(cli.run(["search", "example"]).stdout, rows: 3, "search")
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.run(["list", "--json"]).stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(Set(rows.compactMap { $0["name"] as? String }), [Self.title, Self.clipboard, Self.forged], "JSON stays exact")
        for row in rows {
            let id = try XCTUnwrap(row["recordIdentifier"] as? String)
            let shown = cli.run(["show", id, "--password-stdin"], stdin: master, stdoutIsTerminal: true)
            assertSafe(shown.stdout, "show on a terminal")
            let piped = cli.run(["show", id, "--password-stdin"], stdin: master)
            XCTAssertTrue(piped.stdout.contains("\u{1B}") || piped.stdout.contains("\u{9B}") || piped.stdout.contains("\n\tfake"),
                          "through a pipe show is exact, for edit")
        }
        let audit = cli.run(["audit", "--password-stdin"], stdin: master)
        assertSafe(audit.stdout, "audit")
        let missing = cli.run(["show", "nothing\u{1B}]0;x\u{07}", "--password-stdin"], stdin: master)
        XCTAssertEqual(missing.code, 66)
        assertSafe(missing.stderr, "an error naming what was typed")
        let ambiguous = cli.run(["show", "example", "--password-stdin"], stdin: master)
        assertSafe(ambiguous.stderr, "an error listing entries")
    }

    func testCompletionNeverBreaksACandidate() throws {
        let cli = CLIHarness()
        let environment = ["HOME": cli.environment["HOME"]!, "XDG_STATE_HOME": cli.environment["XDG_STATE_HOME"]!,
                           "XDG_DATA_HOME": cli.environment["XDG_DATA_HOME"]!, "COFFER_CONTAINER": cli.container, "COFFER_AGENT": "off"]
        // The real binary makes the vault and imports the hostile names (it opens only a vault of
        // the standard KDF range, so the in-process harness's vault would complete nothing).
        let master = CLIHarness.master + "\n"
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["init", "--kdf", "interactive", "--password-stdin"], stdin: master, environment: environment).code, 0)
        let csv = try hostileCSV(beside: cli)
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["import", csv, "--password-stdin"], stdin: master, environment: environment).code, 0)
        for prefix in ["", "fake", "real", "evil", "clip"] {
            let offered = try runTool(EndToEndTests.binary, ["__complete", "entry", prefix], environment: environment).stdout
            XCTAssertFalse(offered.split(separator: "\n").contains { $0.hasPrefix("fake.example.com") }, "a forged candidate: \(offered.debugDescription)")
            assertSafe(offered, "__complete entry '\(prefix)'")
        }
        let clean = try runTool(EndToEndTests.binary, ["__complete", "entry", "clip"], environment: environment).stdout
        XCTAssertEqual(clean, "clip.example/bob\n", "the same vault's clean candidates are offered")
    }

    func testPinentryTextsAreEscapedAndFitOneAssuanLine() {
        let long = String(repeating: "/very/long/path", count: 100) + "\u{1B}[2J"
        let line = Assuan.command("SETDESC", DisplayText.escaped(long, keepingLineBreaks: true))
        XCTAssertLessThanOrEqual(line.count, Assuan.maximumLineLength)
        XCTAssertFalse(line.contains(0x1B))
        XCTAssertTrue(String(decoding: line, as: UTF8.self).hasSuffix("…"), "cut at a character, and said so")
        XCTAssertEqual(DisplayText.escaped("a\u{1B}b\nc\u{85}"), "a\\x1Bb\\x0Ac\\u{0085}")
        XCTAssertEqual(DisplayText.escaped("a\nb\tc\u{07}", keepingLineBreaks: true), "a\nb\tc\\x07")
    }

    /// `needsEscaping` reads eight bytes at a time: every control byte, DEL and C1 character at
    /// every position of every length (and across a word's edge) is still found, and text
    /// without one (ASCII, other UTF-8, a lone 0xC2 before a letter) is still passed.
    func testEscapingCheckFindsEveryControlAtEveryPosition() {
        func check(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { DisplayText.needsEscaping($0) } }
        for length in 0...20 {
            let plain = [UInt8](repeating: 0x61, count: length)
            XCTAssertFalse(check(plain), "\(length)")
            for position in 0..<length {
                for control: UInt8 in [0x00, 0x09, 0x0A, 0x1B, 0x1F, 0x7F] {
                    var bytes = plain
                    bytes[position] = control
                    XCTAssertTrue(check(bytes), "\(control) at \(position) of \(length)")
                }
                guard position + 1 < length else { continue }
                for second: UInt8 in [0x80, 0x85, 0x9F] {
                    var bytes = plain
                    bytes[position] = 0xC2
                    bytes[position + 1] = second
                    XCTAssertTrue(check(bytes), "C2 \(second) at \(position) of \(length)")
                }
                var harmless = plain
                harmless[position] = 0xC2
                harmless[position + 1] = 0xA0  // U+00A0, no control
                XCTAssertFalse(check(harmless), "C2 A0 at \(position) of \(length)")
            }
        }
        XCTAssertFalse(check(Array("Zürich ✓ 東京 site.example/path?x=1".utf8)))
    }
}
