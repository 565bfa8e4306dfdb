import Coffer
@testable import CofferCLI
import XCTest

/// What a new user meets in the first minutes (issue 28, items 12–13): names in the list,
/// suggestions that ignore case, a typo forgiven at the password prompt, a note's body from
/// stdin, and a password changed on another device explained.
final class FirstContactTests: XCTestCase {
    func unlocked(_ arguments: [String], _ cli: CLIHarness, stdin: String = "") -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n" + stdin)
    }

    func testListShowsNamesAndDidYouMeanIgnoresCase() {
        let cli = CLIHarness()
        cli.initVault()
        XCTAssertEqual(unlocked(["add", "github.com", "alice", "--name", "GitHub Work"], cli, stdin: "pw\n").code, 0)
        _ = cli.add("example.com", "bob", password: "x")
        let list = unlocked(["list"], cli).stdout
        let line = list.split(separator: "\n").first { $0.contains("github.com") } ?? ""
        XCTAssertTrue(line.contains("GitHub Work"), "the item's name is in its row: " + list)
        let typo = unlocked(["show", "github wrk"], cli)
        XCTAssertEqual(typo.code, 66)
        XCTAssertTrue(typo.stderr.contains("did you mean 'GitHub Work'"), typo.stderr)
    }

    func testATerminalGetsThreeTriesAtTheMasterPassword() {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("example.com", "bob", password: "secret")
        let second = ScriptedTerminal(["typo", CLIHarness.master])
        let shown = cli.run(["show", "example.com"], terminal: second)
        XCTAssertEqual(shown.code, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.hasPrefix("secret\n"))
        XCTAssertTrue(second.written.contains("Wrong master password, try again."), second.written)
        let three = ScriptedTerminal(["one", "two", "three", CLIHarness.master])
        XCTAssertEqual(cli.run(["show", "example.com"], terminal: three).code, 77, "three wrong tries end it")
        XCTAssertEqual(three.prompts.count, 3)
        XCTAssertEqual(cli.run(["show", "example.com", "--password-stdin"], stdin: "wrong\n" + CLIHarness.master + "\n").code, 77,
                       "a supplied password gets one try: the next line is never read as another")
    }

    func testANoteReadsItsBodyFromStdinAndOTPWithoutACodeIs66() {
        let cli = CLIHarness()
        cli.initVault()
        let body = "ssid: home\npassphrase: correct horse\n\nthird paragraph"
        let added = unlocked(["add", "--name", "Wi-Fi", "--kind", "note"], cli, stdin: body + "\n")
        XCTAssertEqual(added.code, 0, added.stderr)
        let shown = unlocked(["show", "Wi-Fi", "--json"], cli).stdout
        XCTAssertTrue(shown.contains("\"notes\":\"ssid: home\\npassphrase: correct horse\\n\\nthird paragraph\""), shown)
        XCTAssertTrue(shown.contains("\"fields\":[]"), "a multi-line note is never parsed as fields: " + shown)
        XCTAssertEqual(unlocked(["otp", "Wi-Fi"], cli).code, 66, "no one-time code: no matching credential, not corrupt data")
    }

    func testAPasswordChangedElsewhereIsExplained() throws {
        let cli = CLIHarness()
        cli.initVault()
        let remote = cli.container + "-remote.git"
        let made = try runTool("/usr/bin/git", ["init", "-q", "--bare", remote])
        try XCTSkipIf(made.code != 0, made.stderr)
        XCTAssertEqual(unlocked(["sync", "remote", remote], cli).code, 0)
        let wrong = cli.run(["show", "x", "--password-stdin"], stdin: "the new password\n")
        XCTAssertEqual(wrong.code, 77)
        XCTAssertTrue(wrong.stderr.contains("changed on another device") && wrong.stderr.contains("coffer sync"), wrong.stderr)
    }
}
