import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

final class BackupCommandTests: XCTestCase {
    func testBackupVerifyRestoreAndRollback() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "alice", password: "v1")
        let tar = cli.container + "-backup.tar"
        XCTAssertEqual(cli.run(["backup", tar]).code, 0)

        let verify = cli.run(["verify", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(verify.code, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stderr.contains("records decrypted"), verify.stderr)
        XCTAssertEqual(cli.run(["verify", tar]).code, 0)

        // Change the vault, then put the old backup back over it: a whole-vault rollback.
        let edit = cli.run(["add", "example.org", "bob", "--password-stdin"], stdin: "\(CLIHarness.master)\nv2\n")
        XCTAssertEqual(edit.code, 0)
        XCTAssertEqual(cli.run(["restore", tar]).code, 64, "the container is not empty")
        XCTAssertEqual(cli.run(["restore", tar, "--force"]).code, 0)
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0,
                       "restore is the user choosing that state: accepted on this device")
    }

    /// The three traps: a .tar.gz that was a directory, an intact older backup called
    /// tampered, and a restore that left every command refusing until an undocumented option.
    func testBackupsTellTheTruth() throws {
        let cli = CLIHarness()
        cli.initVault()
        cli.add("github.com", "alice", password: "first")
        let base = cli.environment["HOME"]!
        for name in ["b.tar.gz", "b.tgz", "b.tar.zst", "old.tar"] {
            XCTAssertEqual(cli.run(["backup", base + "/" + name]).code, 0, name)
        }
        for name in ["b.zip", "b.tar.xz", "b.gz"] {
            XCTAssertEqual(cli.run(["backup", base + "/" + name]).code, 64, name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/" + name), name)
        }
        XCTAssertEqual(try runTool("/usr/bin/tar", ["-tzf", base + "/b.tar.gz"]).stdout.split(separator: "\n").first, "vault.coffer")
        XCTAssertTrue(try runTool("/usr/bin/tar", ["--zstd", "-tf", base + "/b.tar.zst"]).stdout.contains("index/manifest"))

        cli.add("gitlab.com", "bob", password: "second")
        for name in ["old.tar", "b.tar.gz", "b.tar.zst"] {
            let verify = cli.run(["verify", base + "/" + name])
            XCTAssertEqual(verify.code, 0, "\(name): an intact older backup is not tampered with: " + verify.stderr)
            XCTAssertTrue(verify.stderr.contains("older than the live vault (generation 3, this device has seen 3)"), verify.stderr)
        }
        var damaged = Array(try Data(contentsOf: URL(fileURLWithPath: base + "/b.tar.zst")))
        damaged[damaged.count / 2] ^= 0x40
        try Data(damaged).write(to: URL(fileURLWithPath: base + "/damaged.tar.zst"))
        XCTAssertEqual(cli.run(["verify", base + "/damaged.tar.zst"]).code, 65, "damage is still 65")

        // Going back in generation: refused without a terminal or --force, asked on a terminal.
        let refused = cli.run(["restore", base + "/old.tar", "--force", "--no-interaction"].filter { $0 != "--force" })
        XCTAssertEqual(refused.code, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("older than what this device has seen"), refused.stderr)
        let declined = cli.run(["restore", base + "/old.tar"], terminal: ScriptedTerminal(["n"]))
        XCTAssertEqual(declined.code, 1)
        XCTAssertEqual(cli.run(["fill", "gitlab.com", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout, "second\n", "nothing changed")
        XCTAssertEqual(cli.run(["restore", base + "/old.tar", "--force"]).code, 0)
        let fill = cli.run(["fill", "github.com", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(fill.code, 0, "the next fill works: " + fill.stderr)
        XCTAssertEqual(fill.stdout, "first\n")
        XCTAssertEqual(cli.run(["fill", "gitlab.com", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 66, "bob came after the backup")
    }

    /// A rollback that the user did not choose through restore (a copy put back by hand) is
    /// refused everywhere with the hint, and --accept-rollback works on fill and the helpers too.
    func testAcceptRollbackWorksOnFillAndTheCredentialHelpers() throws {
        for host in ["fill", "git"] {
            let cli = CLIHarness()
            cli.initVault()
            cli.add("github.com", "alice", password: "first")
            let copy = cli.container + "-copy"
            try FileManager.default.copyItem(atPath: cli.container, toPath: copy)
            cli.add("gitlab.com", "bob", password: "second")
            try FileManager.default.removeItem(atPath: cli.container)
            try FileManager.default.moveItem(atPath: copy, toPath: cli.container)

            let master = CLIHarness.master + "\n"
            if host == "fill" {
                let refused = cli.run(["fill", "github.com", "--password-stdin"], stdin: master)
                XCTAssertEqual(refused.code, 65)
                XCTAssertTrue(refused.stderr.contains("--accept-rollback"), "the hint where the error is: " + refused.stderr)
                let accepted = cli.run(["fill", "github.com", "--accept-rollback", "--password-stdin"], stdin: master)
                XCTAssertEqual(accepted.code, 0, accepted.stderr)
                XCTAssertEqual(accepted.stdout, "first\n")
            } else {
                XCTAssertEqual(cli.run(["unlock", "--password-stdin"], stdin: master).code, 0)
                defer { cli.run(["lock"]) }
                let refused = cli.runGitHelper(["get"], stdin: "protocol=https\nhost=github.com\n\n")
                XCTAssertFalse(refused.stdout.contains("password=first"), "a rolled-back vault fills nothing")
                let accepted = cli.runGitHelper(["--accept-rollback", "get"], stdin: "protocol=https\nhost=github.com\n\n")
                XCTAssertTrue(accepted.stdout.contains("password=first"), accepted.stdout + accepted.stderr)
            }
            XCTAssertEqual(cli.run(["fill", "github.com", "--password-stdin"], stdin: master).code, 0, "\(host): accepted from now on")
        }
    }

    func testVerifyNamesTheTamperedFileAndExits65() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "alice", password: "pw")
        let path = cli.container + "/records/" + id.prefix(2) + "/" + id
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 1] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let report = cli.run(["verify"])
        XCTAssertEqual(report.code, 65)
        XCTAssertTrue(report.stdout.contains(path), report.stdout)
    }
}
