import Coffer
import Foundation
import XCTest

@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit

/// `coffer run` (the real binary: it spawns, waits and forwards signals as a process) and
/// `coffer inject` (in-process), with the reference syntax and the masker underneath.
final class RunInjectTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }
    var home = ""
    var environment: [String: String] = [:]
    let master = "run test master"

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-run-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        environment = ["HOME": home, "XDG_STATE_HOME": home + "/state", "COFFER_CONTAINER": home + "/vault", "PATH": "/usr/bin:/bin"]
        XCTAssertEqual(try coffer(["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertEqual(try coffer(["add", "github.com", "alice", "--password-stdin"], stdin: "\(master)\nGitHubSecret\n").code, 0)
        let document = "Tok3n-Value\nuser: deploy\nname: CI token\nfield api key: K3y-0f-API\n"
        XCTAssertEqual(try coffer(["add", "ci.example.com", "deploy", "--password-stdin", "--name", "CI token"], stdin: "\(master)\nTok3n-Value\n").code, 0)
        XCTAssertEqual(try coffer(["edit", "CI token", "--password-stdin"], stdin: master + "\n" + document).code, 0)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: home)
    }

    @discardableResult
    func coffer(_ arguments: [String], stdin: String = "", started: ((Process) -> Void)? = nil) throws -> RunResult {
        try runProcess(Self.products + "/coffer", arguments, stdin: stdin, environment: environment, started: started)
    }

    func testRunSetsTheVariablesOnlyInTheChildAndReturnsItsStatus() throws {
        let passes = try coffer(["run", "--env", "TOKEN=coffer://github.com/alice", "--password-stdin", "--",
                                 "sh", "-c", "test \"$TOKEN\" = GitHubSecret && test \"$0\" = sh"], stdin: master + "\n")
        XCTAssertEqual(passes.code, 0, passes.stderr)
        XCTAssertFalse(passes.stdout.contains("GitHubSecret") || passes.stderr.contains("GitHubSecret"))

        try """
            # a template kept in git
            export CI_USER=coffer://CI%20token/user
            CI_KEY="coffer://CI token/field/api key"
            PLAIN=not a reference

            """.write(toFile: home + "/env", atomically: true, encoding: .utf8)
        let members = try coffer(["run", "--env-file", home + "/env", "--no-mask", "--password-stdin", "--",
                                  "sh", "-c", "printf '%s|%s|%s' \"$CI_USER\" \"$CI_KEY\" \"$PLAIN\"; exit 7"], stdin: master + "\n")
        XCTAssertEqual(members.code, 7, "the child's exit status: " + members.stderr)
        XCTAssertEqual(members.stdout, "deploy|K3y-0f-API|not a reference")

        let masked = try coffer(["run", "--env", "T=coffer://github.com/alice", "--mask", "--password-stdin", "--",
                                 "sh", "-c", "echo \"token=$T.\"; printf 'Git'; sleep 0.1; printf 'HubSecret\\n' >&2; printf 'GitHub'"],
                                stdin: master + "\n")
        XCTAssertEqual(masked.code, 0, masked.stderr)
        XCTAssertEqual(masked.stdout, "token=<concealed by coffer>.\nGitGitHub", "a secret is masked, a prefix of it is not")
        XCTAssertEqual(masked.stderr, "HubSecret\n", "streams are masked separately")

        let missing = try coffer(["run", "--env", "T=coffer://github.com/alice", "--password-stdin", "--", "no-such-program"], stdin: master + "\n")
        XCTAssertEqual(missing.code, 127, missing.stderr)
    }

    func testRunStartsNothingWhenLockedOrAReferenceNamesNothing() throws {
        let marker = home + "/started"
        let locked = try coffer(["run", "--env", "T=coffer://github.com/alice", "--", "touch", marker])
        XCTAssertEqual(locked.code, 75, locked.stderr)
        let unknown = try coffer(["run", "--env", "T=coffer://gitlab.com", "--password-stdin", "--", "touch", marker], stdin: master + "\n")
        XCTAssertEqual(unknown.code, 66, unknown.stderr)
        let noField = try coffer(["run", "--env", "T=coffer://CI token/field/nope", "--password-stdin", "--", "touch", marker], stdin: master + "\n")
        XCTAssertEqual(noField.code, 66, noField.stderr)
        let badName = try coffer(["run", "--env", "1T=coffer://github.com", "--", "touch", marker])
        XCTAssertEqual(badName.code, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the child never started")
    }

    func testRunForwardsSignalsSentToIt() throws {
        // The child says when its trap is set (a signal before that would end it unforwarded
        // as far as the test can tell: no fixed pause is long enough on a busy machine).
        let ready = home + "/trap-set"
        let result = try coffer(
            ["run", "--env", "T=coffer://github.com/alice", "--password-stdin", "--", "sh", "-c",
             "trap 'exit 42' TERM; : > \"$1\"; sleep 3 >/dev/null 2>&1 & wait", "sh", ready],
            stdin: master + "\n",
            started: { process in
                for _ in 0..<1000 where !FileManager.default.fileExists(atPath: ready) { usleep(10_000) }
                kill(process.processIdentifier, SIGTERM)
            })
        XCTAssertEqual(result.code, 42, "the child got SIGTERM and its status came back: " + result.stderr)
    }

    func testInjectRendersATemplateAndWritesNothingOnAnUnknownReference() throws {
        let cli = CLIHarness()
        cli.initVault()
        cli.add("github.com", "alice", password: "GitHubSecret")
        let template = "user: {{ coffer://github.com/alice/user }}\npassword: {{coffer://github.com/alice}}\nkept: {{ not.a.reference }} {{ coffer://x\n"
        let stdout = cli.run(["inject", "--password-stdin"], stdin: CLIHarness.master + "\n" + template)
        XCTAssertEqual(stdout.code, 0, stdout.stderr)
        XCTAssertEqual(stdout.stdout, "user: alice\npassword: GitHubSecret\nkept: {{ not.a.reference }} {{ coffer://x\n")

        let base = cli.environment["HOME"]!
        try template.write(toFile: base + "/tpl", atomically: true, encoding: .utf8)
        XCTAssertEqual(cli.run(["inject", "-i", base + "/tpl", "-o", base + "/out", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: base + "/out")
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try String(contentsOfFile: base + "/out", encoding: .utf8), stdout.stdout)
        let exists = cli.run(["inject", "-i", base + "/tpl", "-o", base + "/out", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(exists.code, 73, exists.stderr)
        XCTAssertEqual(cli.run(["inject", "-i", base + "/tpl", "-o", base + "/out", "-f", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)

        try "a: {{ coffer://github.com/alice }}\nb: {{ coffer://nothing.example }}\n".write(toFile: base + "/bad", atomically: true, encoding: .utf8)
        let unknown = cli.run(["inject", "-i", base + "/bad", "-o", base + "/bad.out", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(unknown.code, 66)
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/bad.out"), "nothing written")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: base).contains { $0.hasPrefix(".bad.out") }, "no temp file left")

        // One grammar with run: a reference with a space resolves, and one that names nothing is
        // an error, never copied through.
        cli.run(["add", "--name", "My Bank", "bank.example", "bo", "--password-stdin"], stdin: CLIHarness.master + "\nBankSecret\n")
        let spaced = cli.run(["inject", "--password-stdin"], stdin: CLIHarness.master + "\npin: {{ coffer://My Bank/password }}\n")
        XCTAssertEqual(spaced.stdout, "pin: BankSecret\n", spaced.stderr)
        let missing = cli.run(["inject", "--password-stdin"], stdin: CLIHarness.master + "\npin: {{ coffer://My Other Bank/password }}\n")
        XCTAssertEqual(missing.code, 66, missing.stderr)
        XCTAssertFalse(missing.stdout.contains("coffer://"), "never copied: " + missing.stdout)
    }

    func testReferencesReadTheMemberOffTheEnd() throws {
        XCTAssertEqual(try SecretReference("coffer://github.com/alice").member, .password)
        XCTAssertEqual(try SecretReference("coffer://github.com/alice").entry, "github.com/alice")
        XCTAssertEqual(try SecretReference("coffer://github.com/alice/user").entry, "github.com/alice")
        XCTAssertEqual(try SecretReference("coffer://github.com/alice/user").member, .user)
        XCTAssertEqual(try SecretReference("coffer://GitLab/field/recovery%20code").member, .field("recovery code"))
        XCTAssertEqual(try SecretReference("coffer://github.com/password/password").entry, "github.com/password")
        XCTAssertEqual(try SecretReference("coffer://a%2Fb/otp").entry, "a/b")
        XCTAssertEqual(try SecretReference("coffer://otp").entry, "otp", "a lone word is an entry")
        for bad in ["github.com", "coffer://", "coffer://x/%zz", "coffer://x//user"] {
            XCTAssertThrowsError(try SecretReference(bad), bad)
        }
    }

    func testTheMaskerFindsSecretsAcrossChunkBoundaries() {
        var masker = OutputMasker(secrets: ["hunter22", "hunter2222", "ab"])
        let chunks = ["x hun", "ter22 y hunter2", "222 z hunt", "er"]
        var output: [UInt8] = []
        for chunk in chunks { output += masker.feed(Array(chunk.utf8)) }
        output += masker.feed([], final: true)
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "x <concealed by coffer> y <concealed by coffer> z hunter",
                       "the longer secret wins; a held-back prefix is released at the end; short values are left alone")
    }
}
