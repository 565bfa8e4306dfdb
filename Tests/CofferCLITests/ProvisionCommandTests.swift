import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// `coffer fill`, `list` and `add/edit --match` under the provision rule (SPEC.md §8.1): a
/// sibling host's login is listed, offered on a terminal, and never filled without a choice.
final class ProvisionCommandTests: XCTestCase {
    func json(_ text: String) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
    }

    func testASiblingIsListedOfferedOnATerminalAndNeverFilledWithoutOne() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("git.example.com", "gina", password: "S3cret")
        let master = CLIHarness.master + "\n"

        let script = cli.run(["fill", "other.example.com", "--password-stdin"], stdin: master)
        XCTAssertEqual(script.code, 66, script.stderr)
        XCTAssertEqual(script.stdout, "")
        XCTAssertTrue(script.stderr.contains("gina@git.example.com"), "names the sibling: \(script.stderr)")
        XCTAssertTrue(script.stderr.contains("--match site"), "says how to allow it")
        XCTAssertFalse(script.stderr.contains("S3cret"))

        let listed = try json(cli.run(["list", "other.example.com", "--json", "--password-stdin"], stdin: master).stdout)
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed.first?["match"] as? String, "registrable-domain")
        XCTAssertEqual(listed.first?["automaticFill"] as? Bool, false)
        let own = try json(cli.run(["list", "git.example.com", "--json", "--password-stdin"], stdin: master).stdout)
        XCTAssertEqual(own.first?["match"] as? String, "host")
        XCTAssertEqual(own.first?["automaticFill"] as? Bool, true)

        // On a terminal: a numbered list; Enter cancels, 1 fills.
        let declined = ScriptedTerminal([CLIHarness.master, ""])
        XCTAssertNotEqual(cli.run(["fill", "other.example.com"], terminal: declined).code, 0)
        XCTAssertTrue(declined.written.contains("1) git.example.com  gina  (another host of the same site)"), declined.written)
        let chosen = cli.run(["fill", "other.example.com"], terminal: ScriptedTerminal(["1", CLIHarness.master]))
        XCTAssertEqual(chosen.code, 0, chosen.stderr)
        XCTAssertEqual(chosen.stdout, "S3cret\n")

        // The user allows the whole site for this login: now it fills by itself.
        XCTAssertEqual(cli.run(["edit", id, "--match", "site", "--password-stdin"], stdin: master).code, 0)
        let allowed = cli.run(["fill", "other.example.com", "--password-stdin"], stdin: master)
        XCTAssertEqual(allowed.stdout, "S3cret\n", allowed.stderr)
        let show = try JSONSerialization.jsonObject(with: Data(cli.run(["show", id, "--json", "--password-stdin"], stdin: master).stdout.utf8))
        XCTAssertEqual((show as? [String: Any])?["match"] as? String, "site")
    }

    func testAddWithMatchExactAndNever() throws {
        let cli = CLIHarness()
        cli.initVault()
        let master = CLIHarness.master + "\n"
        XCTAssertEqual(cli.run(["add", "https://intranet.example.com/app1", "ann", "--match", "exact", "--password-stdin"],
                               stdin: master + "app1-pw\n").code, 0)
        XCTAssertEqual(cli.run(["add", "hidden.example.com", "hal", "--match", "never", "--password-stdin"], stdin: master + "hal-pw\n").code, 0)
        XCTAssertEqual(cli.run(["add", "x.example.com", "y", "--match", "sometimes", "--password-stdin"], stdin: master + "pw\n").code, 64)

        XCTAssertEqual(cli.run(["fill", "https://intranet.example.com/app1", "--password-stdin"], stdin: master).stdout, "app1-pw\n")
        XCTAssertEqual(cli.run(["fill", "https://intranet.example.com/app2", "--password-stdin"], stdin: master).code, 66,
                       "an exact login is a suggestion for another path")
        XCTAssertEqual(cli.run(["fill", "hidden.example.com", "--password-stdin"], stdin: master).code, 66, "never: not suggested")
        XCTAssertTrue(cli.run(["list", "--password-stdin"], stdin: master).stdout.contains("hal"), "but in the whole list")
    }
}
