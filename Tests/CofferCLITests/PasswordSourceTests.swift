import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// A line of stdin means one thing whatever the session (issue 28, item 1; SPEC.md §10.1): with
/// `--password-stdin` the first line is the master password, read and checked even while a
/// `coffer unlock` session is live, and the next line is the item's secret.
final class PasswordSourceTests: XCTestCase {
    func testFirstLineIsTheMasterPasswordWithOrWithoutASession() throws {
        let cli = CLIHarness()
        cli.initVault()
        for live in [false, true] {
            if live {
                let unlocked = cli.run(["unlock", "--password-stdin"], stdin: CLIHarness.master + "\n")
                try XCTSkipIf(unlocked.code != 0, "no kernel keyring here: " + unlocked.stderr)
            }
            defer { if live { cli.run(["lock"]) } }
            let service = live ? "session.example" : "locked.example"
            let added = cli.run(["add", service, "alice", "--password-stdin"], stdin: "\(CLIHarness.master)\nitem-secret\n")
            XCTAssertEqual(added.code, 0, added.stderr)
            let shown = cli.run(["fill", service, "--password-stdin"], stdin: CLIHarness.master + "\n")
            XCTAssertEqual(shown.stdout, "item-secret\n", "session live: \(live)")

            let edited = cli.run(["edit", service, "--new-password", "--password-stdin"], stdin: "\(CLIHarness.master)\nnewer-secret\n")
            XCTAssertEqual(edited.code, 0, edited.stderr)
            XCTAssertEqual(cli.run(["fill", service, "--password-stdin"], stdin: CLIHarness.master + "\n").stdout, "newer-secret\n")

            // A wrong master password is refused whether or not a session could have unlocked.
            let wrong = cli.run(["add", service + ".wrong", "bob", "--password-stdin"], stdin: "not the master\nitem\n")
            XCTAssertEqual(wrong.code, 77, "session live: \(live): " + wrong.stderr)
            let wrongFill = cli.run(["fill", service, "--password-stdin"], stdin: "not the master\n")
            XCTAssertEqual(wrongFill.code, 77, "session live: \(live): " + wrongFill.stderr)
            XCTAssertEqual(wrongFill.stdout, "")
        }
        XCTAssertFalse(cli.run(["list"]).stdout.contains(".wrong"), "nothing was added with a wrong master password")
    }

    /// `--password-stdin` names standard input as the source of every value the command reads,
    /// terminal or not (issue 49, item 1): a person at a terminal piping lines into `add` or
    /// `edit` is never asked on the terminal for the item's password, its one-time code, a note's
    /// body or the item's text. The terminal here answers nothing, so a prompt fails the test.
    func testPasswordStdinReadsEveryValueFromStdinEvenWithATerminal() throws {
        let cli = CLIHarness()
        cli.initVault()
        let terminal = ScriptedTerminal([])
        let added = cli.run(["add", "site.example", "alice", "--password-stdin"], stdin: "\(CLIHarness.master)\nitem-secret\n", terminal: terminal)
        XCTAssertEqual(added.code, 0, added.stderr)
        let otp = "otpauth://totp/site:alice?secret=JBSWY3DPEHPK3PXP&issuer=site"
        let edited = cli.run(["edit", "site.example", "--new-password", "--otp", "--password-stdin"],
                             stdin: "\(CLIHarness.master)\nnewer\n\(otp)\n", terminal: terminal)
        XCTAssertEqual(edited.code, 0, edited.stderr)
        let note = cli.run(["add", "--name", "Wi-Fi", "--kind", "note", "--password-stdin"], stdin: "\(CLIHarness.master)\nbody line\n", terminal: terminal)
        XCTAssertEqual(note.code, 0, note.stderr)
        let shown = cli.run(["show", "site.example", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["password"] as? String, "newer")
        XCTAssertEqual((object["otp"] as? String)?.contains("JBSWY3DPEHPK3PXP"), true)
        let body = cli.run(["show", "Wi-Fi", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertTrue(body.stdout.contains("body line"), body.stdout)
        let text = cli.run(["show", "Wi-Fi", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout
        let asText = cli.run(["edit", "Wi-Fi", "--password-stdin"],
                             stdin: CLIHarness.master + "\n" + text.replacingOccurrences(of: "body line", with: "new body"), terminal: terminal)
        XCTAssertEqual(asText.code, 0, asText.stderr)
        XCTAssertTrue(cli.run(["show", "Wi-Fi", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.contains("new body"))
        XCTAssertEqual(terminal.prompts, [], "nothing was asked on the terminal")
    }
}
