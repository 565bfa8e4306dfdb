import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// One way to name an entry for every command (README "Naming an entry"): id, id prefix,
/// SERVICE/USER, name, SERVICE — and what happens with several matches or none.
final class EntryOperandTests: XCTestCase {
    func testEveryFormResolvesInOrder() throws {
        let cli = CLIHarness()
        cli.initVault()
        let alice = cli.add("github.com", "alice", password: "pw-alice")
        _ = cli.add("github.com", "bob", password: "pw-bob")
        XCTAssertEqual(cli.run(["edit", alice, "--name", "GitHub", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        _ = cli.add("https://gitlab.com/users/sign_in", "carol", password: "pw-carol")
        func show(_ entry: String, terminal: Terminal? = nil) -> RunResult {
            terminal == nil ? cli.run(["show", entry, "--password-stdin"], stdin: CLIHarness.master + "\n")
                : cli.run(["show", entry], terminal: terminal)
        }
        func password(_ result: RunResult) -> String { String(result.stdout.split(separator: "\n").first ?? "") }
        XCTAssertEqual(password(show(alice)), "pw-alice", "a full id")
        XCTAssertEqual(password(show(String(alice.prefix(6)))), "pw-alice", "a unique prefix")
        XCTAssertEqual(password(show("github.com/bob")), "pw-bob", "SERVICE/USER, as pass paths read")
        XCTAssertEqual(password(show("github")), "pw-alice", "a name, any case")
        XCTAssertEqual(password(show("gitlab.com")), "pw-carol", "a service, as fill matches it")

        let several = show("github.com")
        XCTAssertEqual(several.code, 64, "two logins and no terminal: the candidates, as rbw lists them")
        XCTAssertTrue(several.stderr.contains("alice@github.com  GitHub  \(alice.prefix(8))"), several.stderr)
        XCTAssertTrue(several.stderr.contains("bob@github.com"), several.stderr)
        let chosen = show("github.com", terminal: ScriptedTerminal([CLIHarness.master, "2"]))
        XCTAssertEqual(chosen.code, 0, chosen.stderr)
        XCTAssertTrue(["pw-alice", "pw-bob"].contains(password(chosen)))

        let none = show("GitHbu")
        XCTAssertEqual(none.code, 66)
        XCTAssertTrue(none.stderr.contains("did you mean 'GitHub'"), none.stderr)
        XCTAssertEqual(cli.run(["rm", "github.com/bob", "--force", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(password(show("github.com")), "pw-alice", "now one match")
    }
}

/// The habits of pass users: no silent duplicate, `generate 32`, short options.
final class CommandHabitTests: XCTestCase {
    func testAddNeverMakesASilentDuplicate() throws {
        let cli = CLIHarness()
        cli.initVault()
        let first = cli.add("github.com", "alice", password: "one")
        let again = cli.run(["add", "github.com", "alice", "--password-stdin"], stdin: "\(CLIHarness.master)\ntwo\n")
        XCTAssertEqual(again.code, 64, "no terminal: refused with a hint")
        XCTAssertTrue(again.stderr.contains("--force") && again.stderr.contains("--duplicate"), again.stderr)
        XCTAssertEqual(cli.run(["add", "github.com", "alice", "-f", "--password-stdin"], stdin: "\(CLIHarness.master)\ntwo\n").code, 0)
        XCTAssertTrue(cli.run(["show", first, "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.hasPrefix("two\n"), "--force updated it")
        let asked = cli.run(["add", "github.com", "alice"], terminal: ScriptedTerminal([CLIHarness.master, "y", "three", "three"]))
        XCTAssertEqual(asked.code, 0, asked.stderr)
        XCTAssertTrue(cli.run(["show", first, "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.hasPrefix("three\n"), "a yes updates it")
        XCTAssertEqual(cli.run(["add", "github.com", "alice", "--duplicate", "--password-stdin"], stdin: "\(CLIHarness.master)\nfour\n").code, 0)
        let listed = try JSONSerialization.jsonObject(with: Data(cli.run(["list", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(listed.count, 2, "--duplicate adds another")
    }

    func testGenerateTakesALengthAndShortOptionsWork() throws {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["generate", "32"]).stdout.count, 33)
        XCTAssertEqual(cli.run(["generate", "32", "--length", "8"]).code, 64)
        cli.initVault()
        _ = cli.add("example.com", "bob", password: "pw")
        let json = cli.run(["show", "example.com", "-j", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertTrue(json.stdout.hasPrefix("{"), json.stderr)
        XCTAssertEqual(cli.run(["show", "example.com", "-n"]).code, 75, "-n is --no-interaction")
        XCTAssertEqual(cli.run(["fill", "example.com", "-u", "bob", "-j", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(cli.run(["rm", "example.com", "-fj"]).code, 64, "a cluster with an option rm does not have")
        XCTAssertEqual(cli.run(["rm", "example.com", "-f", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        let printed = cli.run(["add", "example.org", "x", "--generate=12", "--show", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(printed.stdout.split(separator: "\n").first?.count, 12, "--show prints the generated password first")
    }
}

/// Entries complete in a real bash from the identity store, while the vault is locked.
final class EntryCompletionTests: XCTestCase {
    func testBashCompletesNamesPathsAndServicesWhileLocked() throws {
        // The real binary with the standard KDF policy, as a shell would run it.
        let cli = CLIHarness()
        let binDirectory = (EndToEndTests.binary as NSString).deletingLastPathComponent
        var environment = ["PATH": binDirectory + ":/usr/bin:/bin", "COFFER_CONTAINER": cli.container]
        for name in ["HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"] { environment[name] = cli.environment[name] }
        let master = CLIHarness.master + "\n"
        for arguments in [["init", "--kdf", "interactive"], ["add", "github.com", "alice"], ["add", "--name", "GitHub notes", "--kind", "note"]] {
            let result = try runTool(EndToEndTests.binary, arguments + ["--password-stdin"], stdin: master + "pw\n", environment: environment)
            XCTAssertEqual(result.code, 0, result.stderr)
        }
        let script = try ShellTab.script(.bash, cli: cli)
        XCTAssertEqual(try ShellTab.press(.bash, typing: ["coffer show Git", "coffer show git", "coffer fill gi"], cli: cli, environment: environment),
                       [["coffer", "show", "GitHub notes"], ["coffer", "show", "github.com"], ["coffer", "fill", "github.com"]],
                       "a name with its space; a service and a SERVICE/USER path: their common part")
        // The scripts ask Coffer for the matches only: the shell never sorts or filters the vault.
        XCTAssertFalse(try String(contentsOfFile: script, encoding: .utf8).contains("sort"), "the bash script still sorts")
        let direct = try runTool(EndToEndTests.binary, ["__complete", "entry", "git"], environment: environment)
        XCTAssertEqual(direct.stdout, "github.com\ngithub.com/alice\n", "sorted as bytes, each once, only what starts with the word")
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["__complete", "entry", ""], environment: environment).stdout,
                       "GitHub notes\ngithub.com\ngithub.com/alice\n")
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["__complete", "service", ""], environment: environment).stdout, "github.com\n")

        // The device's completion table (SPEC.md §7.6): sealed, replaced after any change, and a
        // damaged one is rebuilt rather than trusted.
        let vaults = environment["XDG_STATE_HOME"]! + "/coffer/vaults"
        let vaultDirectory = vaults + "/" + (try FileManager.default.contentsOfDirectory(atPath: vaults).first ?? "")
        let table = vaultDirectory + "/completion"
        let sealed = try Data(contentsOf: URL(fileURLWithPath: table))
        XCTAssertNil(sealed.range(of: Data("github".utf8)), "no name in the clear")
        let added = try runTool(EndToEndTests.binary, ["add", "gitlab.com", "bob", "--password-stdin"], stdin: master + "pw\n", environment: environment)
        XCTAssertEqual(added.code, 0, added.stderr)
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["__complete", "entry", "git"], environment: environment).stdout,
                       "github.com\ngithub.com/alice\ngitlab.com\ngitlab.com/bob\n", "a change is seen at the next Tab")
        var damaged = try Data(contentsOf: URL(fileURLWithPath: table))
        damaged[damaged.count - 1] ^= 1
        try damaged.write(to: URL(fileURLWithPath: table))
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["__complete", "entry", "gitl"], environment: environment).stdout, "gitlab.com\ngitlab.com/bob\n")
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: table)), damaged, "rebuilt")
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["__complete", "nonsense", "x"], environment: environment).code, 64)

        // fish and zsh: their own completion machinery, in a terminal, as a person presses Tab.
        for shell in [ShellTab.Shell.fish, .zsh] where FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") {
            XCTAssertEqual(try ShellTab.press(shell, typing: "coffer show gitlab.com/", cli: cli, environment: environment),
                           ["coffer", "show", "gitlab.com/bob"], "\(shell)")
        }
        XCTAssertFalse(try runTool(EndToEndTests.binary, ["help"], environment: environment).stdout.contains("__complete"), "hidden from help")
        let formatted = try runTool(EndToEndTests.binary, ["list", "-n", "--format", "{service}\\t{user}\\t{name}\\t{kind}"], environment: environment)
        XCTAssertEqual(Set(formatted.stdout.split(separator: "\n")), ["\t\tGitHub notes\tnote", "github.com\talice\t\tlogin", "gitlab.com\tbob\t\tlogin"],
                       "while locked")
    }
}
