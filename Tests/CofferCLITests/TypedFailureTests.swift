import Coffer
@testable import CofferBrowserHost
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import XCTest

/// A code (exit status, browser-host error) is a property of the error's type, decided where
/// the error is made — never recovered from its wording (issue 29, item 2). Every provider
/// answer is reworded here, and no code may change.
final class TypedFailureTests: XCTestCase {
    static let vaultErrors: [VaultError] = [
        .wrongPassword, .locked, .recordNotFound(try! RecordID.random()), .noVault(container: "/c"), .vaultExists(container: "/c"),
        .corrupt(file: "records/ab/x", reason: "authentication failed"), .kdfParametersOutOfRange(file: "vault.coffer"),
        .rolledBack(generation: 3, highestSeen: 9), .invalidInput("bad"), .noOneTimeCode(item: "GitHub"), .crypto(.authenticationFailed),
    ]

    /// Wordings a future edit could give any message: the old one's keywords, none, or another's.
    static let rewordings: [String?] = [nil, "", "tampered corrupt rolled back wrong master password", "the vault is locked", "Ça n'a pas marché"]

    func testEveryProviderAnswerKeepsItsCodeWhateverItsWording() {
        for underlying in Self.vaultErrors {
            let expected = CLIError.from(underlying).code
            let expectedHost = BrowserHostError.from(ExtensionError(.failed, failureReason: "x", underlyingError: underlying)).code
            for reason in Self.rewordings {
                let answer = ExtensionError(.failed, failureReason: reason, underlyingError: underlying)
                XCTAssertEqual(CLIError.from(answer).code, expected, "\(underlying) worded \(reason ?? "nil")")
                XCTAssertEqual(BrowserHostError.from(answer).code, expectedHost, "\(underlying) worded \(reason ?? "nil")")
            }
        }
        for code in [ExtensionError.Code.failed, .userCanceled, .userInteractionRequired, .credentialIdentityNotFound] {
            let expected = CLIError.from(ExtensionError(code)).code
            for reason in Self.rewordings {
                XCTAssertEqual(CLIError.from(ExtensionError(code, failureReason: reason)).code, expected, "\(code) worded \(reason ?? "nil")")
                XCTAssertEqual(BrowserHostError.from(ExtensionError(code, failureReason: reason)).code,
                               BrowserHostError.from(ExtensionError(code)).code)
            }
        }
        // The cases that matter most, by name.
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.wrongPassword)).code, .permissionDenied)
        XCTAssertEqual(CLIError.from(ExtensionError(.failed, failureReason: "wrong master password")).code, .failure,
                       "a reason alone, without the error behind it, decides nothing")
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.corrupt(file: "f", reason: "r"))).code, .dataError)
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.rolledBack(generation: 1, highestSeen: 2))).code, .dataError)
        XCTAssertEqual(BrowserHostError.from(ExtensionError.failed(VaultError.wrongPassword)).code, "wrongPassword")
    }
}

/// Where the binary differed from SPEC.md (issue 29, item 6): every command gives the same code
/// for the same finding, no option is silently half-applied, and no imported member vanishes
/// without a word.
final class SpecConformanceTests: XCTestCase {
    func unlocked(_ arguments: [String], _ cli: CLIHarness, stdin: String = "") -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n" + stdin)
    }

    func testADirectoryOpenToOthersIs78ForVerifyAsForShow() throws {
        let cli = CLIHarness()
        cli.initVault()
        cli.add("example.com", "alice", password: "pw")
        chmod(cli.container + "/records", 0o750)
        defer { chmod(cli.container + "/records", 0o700) }
        XCTAssertEqual(unlocked(["show", "example.com"], cli).code, 78)
        let verified = unlocked(["verify"], cli)
        XCTAssertEqual(verified.code, 78, verified.stdout + verified.stderr)
        XCTAssertFalse(verified.stdout.contains("missing"), "a refused directory is not a deleted record: " + verified.stdout)
    }

    func testEveryRepeatedServiceOptionIsApplied() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("a.example", "alice", password: "pw")
        XCTAssertEqual(unlocked(["edit", id, "--add-service", "b.example", "--add-service", "c.example"], cli).code, 0)
        let services = { () -> [String] in
            let shown = try? JSONSerialization.jsonObject(with: Data(self.unlocked(["show", id, "--json"], cli).stdout.utf8)) as? [String: Any]
            return (shown?["serviceIdentifiers"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
        }
        XCTAssertEqual(services(), ["a.example", "b.example", "c.example"])
        XCTAssertEqual(unlocked(["edit", id, "--remove-service", "a.example", "--remove-service", "c.example"], cli).code, 0)
        XCTAssertEqual(services(), ["b.example"])
    }

    func testAnUnknownMemberOfACofferExportIsReported() throws {
        let cli = CLIHarness()
        cli.initVault()
        let file = cli.container + "-export.json"
        try #"[{"created":"2026-01-01T00:00:00Z","fields":[],"id":"77659535c225b3750637e34a6e690cca","kind":"login","match":"host","modified":"2026-01-01T00:00:00Z","name":"","notes":"","otp":null,"password":"p","passwordHistory":[],"revision":1,"serviceIdentifiers":[{"identifier":"ex.com","type":"domain"}],"tags":[],"user":"u","futureMember":{"rpId":"ex.com"}}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", file, "--dry-run"], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("futureMember: dropped 1 (a member this version of Coffer does not know)"), imported.stderr)
    }
}
