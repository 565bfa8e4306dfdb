import Coffer
@testable import CofferCLI
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
