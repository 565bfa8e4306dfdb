import Coffer
@testable import CofferCLI
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
        let refused = cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(refused.code, 65)
        XCTAssertTrue(refused.stderr.contains("rolled back"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--accept-rollback"))
        let accepted = cli.run(["show", id, "--accept-rollback", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(accepted.code, 0, accepted.stderr)
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
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
