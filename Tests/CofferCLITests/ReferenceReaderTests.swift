import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// The independent Python reader (Tools/reference, written from SPEC.md alone, its own libsodium
/// through PyNaCl) opens a vault this implementation wrote — every item kind and member, and the
/// index with its one-time-code identities and item entries — after the format changes of
/// issue 19. Agreement is the evidence that SPEC.md says enough.
final class ReferenceReaderTests: XCTestCase {
    func testTheReferenceReaderOpensWhatCofferWrites() throws {
        let cli = CLIHarness()
        cli.initVault()
        let master = CLIHarness.master
        XCTAssertEqual(cli.run(["add", "gitlab.com", "me", "--name", "GitLab", "--tag", "Work", "--otp", "--password-stdin"],
                               stdin: "\(master)\npw1\notpauth://totp/GitLab:me?secret=JBSWY3DPEHPK3PXP\n").code, 0)
        XCTAssertEqual(cli.run(["edit", "GitLab", "--new-password", "--password-stdin"], stdin: "\(master)\npw2\n").code, 0)
        XCTAssertEqual(cli.run(["add", "--name", "Wi-Fi at home", "--kind", "note", "--password-stdin"], stdin: "\(master)\n").code, 0)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Tools/reference/coffer_reference.py")
            .standardized.path
        let result = try runTool("/usr/bin/python3", [script, "list", cli.container], stdin: master + "\n",
                                 environment: ["COFFER_REFERENCE_RELAXED": "1"])
        XCTAssertEqual(result.code, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let documents = try lines.filter { $0.hasPrefix("{") }.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let login = try XCTUnwrap(documents.first { $0["name"] as? String == "GitLab" })
        XCTAssertEqual(login["password"] as? String, "pw2")
        XCTAssertEqual((login["passwordHistory"] as? [[String: Any]])?.first?["password"] as? String, "pw1")
        XCTAssertEqual(login["tags"] as? [String], ["Work"])
        let note = try XCTUnwrap(documents.first { $0["name"] as? String == "Wi-Fi at home" })
        XCTAssertEqual(note["kind"] as? String, "note")
        XCTAssertEqual((note["serviceIdentifiers"] as? [Any])?.count, 0)
        // One password and one one-time-code identity for the login; an item entry each.
        XCTAssertTrue(lines.contains { $0.hasSuffix(": 2 identities, 2 items, 2 ledger entries") }, result.stdout)
    }
}
