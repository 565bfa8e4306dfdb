import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// `coffer pick` with the real fzf, `coffer menu` with a dmenu-compatible launcher, and a locked
/// vault answered through the scripted pinentry (Assuan), as a desktop user meets them.
final class PickerTests: XCTestCase {
    let pinentry = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Helpers/scripted-pinentry").standardized.path

    /// A vault with two logins, locked, its store enabled (listing works, secrets need a password).
    func harness(answers: [String]) throws -> (CLIHarness, log: String) {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("github.com", "alice", password: "pw-github")
        XCTAssertEqual(cli.run(["add", "gitlab.com", "bob", "--name", "GitLab", "--otp", "--password-stdin"],
                               stdin: "\(CLIHarness.master)\npw-gitlab\notpauth://hotp/bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0\n").code, 0)
        let base = cli.container + "/.."
        try answers.joined(separator: "\n").write(toFile: base + "/answers", atomically: true, encoding: .utf8)
        cli.environment["COFFER_PINENTRY"] = pinentry
        cli.environment["SCRIPTED_PINENTRY_ANSWERS"] = base + "/answers"
        cli.environment["SCRIPTED_PINENTRY_LOG"] = base + "/pinentry.log"
        cli.environment["PATH"] = "/usr/bin:/bin"
        return (cli, base + "/pinentry.log")
    }

    func testPickWithFzfAsksPinentryWhenLocked() throws {
        let (cli, log) = try harness(answers: ["wrong", CLIHarness.master])
        cli.environment["FZF_DEFAULT_OPTS"] = "--filter=gitlab"  // fzf's own matching, without a screen
        let picked = cli.run(["pick"], terminal: ScriptedTerminal([]))  // fzf draws on a terminal
        XCTAssertEqual(picked.code, 0, picked.stderr)
        XCTAssertEqual(picked.stdout, "pw-gitlab\n")
        let conversation = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertEqual(conversation.components(separatedBy: "GETPIN").count - 1, 2, "a wrong password, then the right one")
        XCTAssertTrue(conversation.contains("SETERROR"), conversation)
        XCTAssertFalse(conversation.contains(CLIHarness.master), "the log never holds the password")

        cli.environment["FZF_DEFAULT_OPTS"] = "--filter=bob"
        try CLIHarness.master.write(toFile: cli.container + "/../answers", atomically: true, encoding: .utf8)
        let code = cli.run(["pick", "--otp"], terminal: ScriptedTerminal([]))
        XCTAssertEqual(code.code, 0, code.stderr)
        XCTAssertEqual(code.stdout, "755224\n", "RFC 4226's first code, through the provider's one-time-code path")
    }

    /// A team's logins are picked from the same list, marked `TEAM:`; pinentry asks for one's
    /// own master password, which opens the team (SPEC.md §16.6).
    func testATeamsLoginIsPickedThroughTheOwnersPinentry() throws {
        let (cli, log) = try harness(answers: [CLIHarness.master])
        XCTAssertEqual(cli.run(["team", "create", "ops", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(cli.run(["add", "--team", "ops", "deploy.example", "ci", "--password-stdin"], stdin: "\(CLIHarness.master)\npw-team\n").code, 0)
        cli.environment["FZF_DEFAULT_OPTS"] = "--filter=ops:deploy"
        let picked = cli.run(["pick"], terminal: ScriptedTerminal([]))  // fzf draws on a terminal
        XCTAssertEqual(picked.code, 0, picked.stderr)
        XCTAssertEqual(picked.stdout, "pw-team\n")
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8).components(separatedBy: "GETPIN").count - 1, 1)
    }

    func testCancellingPinentryReleasesNothing() throws {
        let (cli, _) = try harness(answers: ["CANCEL"])
        cli.environment["FZF_DEFAULT_OPTS"] = "--filter=github"
        let picked = cli.run(["pick"], terminal: ScriptedTerminal([]))  // fzf draws on a terminal
        XCTAssertNotEqual(picked.code, 0)
        XCTAssertEqual(picked.stdout, "")
    }

    func testWithoutFzfATerminalMenuChooses() throws {
        let (cli, _) = try harness(answers: [CLIHarness.master, CLIHarness.master])
        cli.environment["PATH"] = cli.container + "/../empty-bin"  // no fzf here
        let picked = cli.run(["pick", "git"], terminal: ScriptedTerminal(["1"]))
        XCTAssertEqual(picked.code, 0, picked.stderr)
        XCTAssertTrue(["pw-github\n", "pw-gitlab\n"].contains(picked.stdout), picked.stdout)
        XCTAssertEqual(cli.run(["pick", "github"]).stdout, "pw-github\n", "one match needs no choice")
    }

    /// `coffer menu` with a dmenu-compatible launcher, typing through xdotool: the secret goes
    /// to the typing tool's stdin, never its argv.
    func testMenuTypesThePickedPasswordThroughAStdinPipe() throws {
        let (cli, _) = try harness(answers: [CLIHarness.master])
        let bin = cli.container + "/../bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let launcher = bin + "/launcher", typed = cli.container + "/../typed", argv = cli.container + "/../argv"
        try "#!/bin/sh\ngrep github\n".write(toFile: launcher, atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho \"$@\" > '\(argv)'\ncat > '\(typed)'\n".write(toFile: bin + "/xdotool", atomically: true, encoding: .utf8)
        chmod(launcher, 0o755)
        chmod(bin + "/xdotool", 0o755)
        cli.environment["PATH"] = ControlledPath.path(fakes: [bin], tools: ControlledPath.basics + ["grep"])  // no real wtype or xdotool
        cli.environment["DISPLAY"] = ":99"
        let menu = cli.run(["menu", "--launcher", launcher, "--type"])
        XCTAssertEqual(menu.code, 0, menu.stderr)
        XCTAssertEqual(try String(contentsOfFile: typed, encoding: .utf8), "pw-github")
        XCTAssertEqual(try String(contentsOfFile: argv, encoding: .utf8), "type --clearmodifiers --file -\n")
        XCTAssertEqual(cli.run(["menu", "--launcher", "nosuch"]).code, 64)
    }
}
