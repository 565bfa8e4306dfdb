import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
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

    // MARK: Smaller things a newcomer met (issue 49, item 9)

    func testAPasswordOnTheCommandLineIsPointedToStdin() {
        let cli = CLIHarness()
        cli.initVault()
        let result = cli.run(["add", "example.com", "alice", "--password", "hunter2"])
        XCTAssertEqual(result.code, 64)
        XCTAssertTrue(result.stderr.contains("no password is taken on the command line") && result.stderr.contains("--password-stdin"), result.stderr)
        XCTAssertFalse(result.stderr.contains("hunter2"), "the password is not echoed back")
    }

    func testSearchFindsTagsWhileUnlockedAndSaysSoWhileLocked() {
        let cli = CLIHarness()
        cli.initVault()
        XCTAssertEqual(unlocked(["add", "bank.example", "me", "--tag", "Finance"], cli, stdin: "pw\n").code, 0)
        XCTAssertTrue(unlocked(["search", "financ"], cli).stdout.contains("bank.example"), "a tag matches while unlocked")
        let locked = cli.run(["search", "financ"])
        XCTAssertEqual(locked.code, 66)
        XCTAssertTrue(locked.stderr.contains("tags are searched while the vault is unlocked"), locked.stderr)
    }

    func testListShowsAURLLoginByItsHost() {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("https://login.example.com/realms/main/protocol/openid-connect/auth", "alice", password: "x")
        let table = cli.run(["list"]).stdout
        XCTAssertTrue(table.hasPrefix("login.example.com  "), table)
        XCTAssertFalse(table.contains("openid-connect"), "the table shows the host, not the whole URL: " + table)
        XCTAssertTrue(cli.run(["list", "--json"]).stdout.contains("openid-connect"), "JSON keeps the URL")
    }

    func testGenerateSavesANewLoginOrANewPassword() throws {
        let cli = CLIHarness()
        cli.initVault()
        let made = unlocked(["generate", "16", "--save", "gen.example/zed"], cli)
        XCTAssertEqual(made.code, 0, made.stderr)
        let first = made.stdout.trimmingCharacters(in: .newlines)
        XCTAssertEqual(first.count, 16)
        XCTAssertEqual(unlocked(["fill", "gen.example"], cli).stdout, first + "\n", "a new login for SERVICE/USER")
        let again = unlocked(["generate", "--save", "gen.example/zed"], cli).stdout.trimmingCharacters(in: .newlines)
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["show", "gen.example/zed", "--json"], cli).stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["password"] as? String, again, "an existing entry gets the new password")
        XCTAssertEqual((shown["passwordHistory"] as? [[String: Any]])?.first?["password"] as? String, first, "the old one is kept")
    }

    func testVerifyPassesATempFileOfAWriteInFlight() throws {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("example.com", "bob", password: "x")
        // What another process's write has in tmp/ while it holds the lock (and what a killed
        // one leaves): garbage by SPEC.md §3.4, never a problem.
        FileManager.default.createFile(atPath: cli.container + "/tmp/in-flight", contents: Data([1, 2, 3]))
        let verified = cli.run(["verify"])
        XCTAssertEqual(verified.code, 0, verified.stdout + verified.stderr)
    }

    func testPickWithoutATerminalNeverRunsFzf() throws {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("a.example", "alice", password: "x")
        _ = cli.add("b.example", "bob", password: "y")
        // A fzf that would fail as the real one does without a terminal.
        let directory = ControlledPath.directory()
        let fakes = cli.container + "-fakes"
        try FileManager.default.createDirectory(atPath: fakes, withIntermediateDirectories: true)
        try "#!/bin/sh\necho '[fzf] Failed to read /dev/tty' >&2\nexit 2\n".write(toFile: fakes + "/fzf", atomically: true, encoding: .utf8)
        chmod(fakes + "/fzf", 0o755)
        cli.environment["PATH"] = fakes + ":" + directory
        let picked = unlocked(["pick", "example"], cli)
        XCTAssertEqual(picked.code, 64, picked.stderr)
        XCTAssertTrue(picked.stderr.contains("2 entries match and there is no terminal"), picked.stderr)
        XCTAssertFalse(picked.stderr.contains("fzf"), picked.stderr)
        XCTAssertEqual(unlocked(["pick", "alice"], cli).stdout, "x\n", "one match is taken without asking")
    }

    func testTheManPageSynopsesAreOneLineEach() {
        let page = CLIHarness().run(["help", "--man"]).stdout
        for line in page.split(separator: "\n") where line.hasPrefix(".SS ") {
            XCTAssertTrue(line.hasPrefix(".SS \"") && line.hasSuffix("\""), "a synopsis broken over lines: \(line)")
        }
    }
}
