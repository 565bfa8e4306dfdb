import Coffer
@testable import CofferCLI
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
}
