import Foundation
import XCTest

/// The helpers driven by the real clients' protocols, as separate processes without a terminal.
final class HelperTests: XCTestCase {
    var home = ""
    var environment: [String: String] = [:]
    let master = "helper master"
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-helpers-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        environment = [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data",
            "XDG_CONFIG_HOME": home + "/config", "COFFER_CONTAINER": home + "/vault",
            "PATH": "\(Self.products):/usr/bin:/bin", "GIT_TERMINAL_PROMPT": "0",
        ]
        XCTAssertEqual(try run("coffer", ["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
    }

    override func tearDown() {
        _ = try? run("coffer", ["lock"])
        try? FileManager.default.removeItem(atPath: home)
    }

    struct Output { let code: Int32; let stdout: String; let stderr: String }

    @discardableResult
    func run(_ tool: String, _ arguments: [String], stdin: String = "") throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        let path = tool.hasPrefix("/") ? tool : (tool == "git" ? "/usr/bin/git" : Self.products + "/" + tool)
        process.arguments = ["-w", "/usr/bin/timeout", "60", path] + arguments
        process.environment = environment
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(code: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    func testGitCredentialFillApproveRejectAndTheLockedCase() throws {
        try run("git", ["config", "--global", "credential.helper", Self.products + "/git-credential-coffer"])
        let request = "protocol=https\nhost=git.example.com\n\n"

        // Locked, no terminal: the helper prints nothing, git falls back (and, with prompts
        // disabled, gives up) instead of hanging; no password anywhere.
        XCTAssertEqual(try run("coffer", ["add", "https://git.example.com", "alice", "--password-stdin"], stdin: "\(master)\nGitSecret\n").code, 0)
        let locked = try run("git", ["credential", "fill"], stdin: request)
        XCTAssertNotEqual(locked.code, 0)
        XCTAssertNotEqual(locked.code, 124, "timed out: the helper hung")
        XCTAssertFalse((locked.stdout + locked.stderr).contains("GitSecret"))

        XCTAssertEqual(try run("coffer", ["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        let filled = try run("git", ["credential", "fill"], stdin: request)
        XCTAssertEqual(filled.code, 0, filled.stderr)
        XCTAssertTrue(filled.stdout.contains("username=alice\n"), filled.stdout)
        XCTAssertTrue(filled.stdout.contains("password=GitSecret\n"))

        // approve stores a new credential; a second approve with a new password updates it.
        XCTAssertEqual(try run("git", ["credential", "approve"], stdin: "protocol=https\nhost=other.example.com:8443\nusername=bob\npassword=first\n\n").code, 0)
        XCTAssertEqual(try run("git", ["credential", "approve"], stdin: "protocol=https\nhost=other.example.com:8443\nusername=bob\npassword=second\n\n").code, 0)
        let other = try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=other.example.com:8443\n\n")
        XCTAssertTrue(other.stdout.contains("password=second"), other.stdout)
        XCTAssertEqual(try run("coffer", ["list", "other.example.com:8443", "--json"]).stdout.components(separatedBy: "bob").count - 1, 1,
                       "updated, not doubled")

        // An https credential is not offered to http.
        let http = try run("git", ["credential", "fill"], stdin: "protocol=http\nhost=git.example.com\n\n")
        XCTAssertFalse(http.stdout.contains("GitSecret"))

        XCTAssertEqual(try run("git", ["credential", "reject"], stdin: "protocol=https\nhost=git.example.com\nusername=alice\n\n").code, 0)
        XCTAssertFalse(try run("coffer", ["list", "https://git.example.com"]).stdout.contains("alice"), "rejected credential erased")
        XCTAssertTrue(try run("coffer", ["list", "other.example.com"]).stdout.contains("bob"), "only the matching one")

        // Unknown operations and attributes are ignored.
        let helper = Self.products + "/git-credential-coffer"
        XCTAssertEqual(try run(helper, ["frobnicate"], stdin: "protocol=https\nhost=x\nwwwauth[]=Basic\n\n").code, 0)
    }

    /// The issue's repro and its neighbours, through the real git: git.example.com's password
    /// never reaches a sibling host, another port, plain http, another user's github.io or a
    /// look-alike name; approve and reject touch only what git's own matching names.
    func testGitNeverHandsAPasswordToAnotherServer() throws {
        try run("git", ["config", "--global", "credential.helper", Self.products + "/git-credential-coffer"])
        XCTAssertEqual(try run("coffer", ["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        for (host, user, password) in [("git.example.com", "gina", "S3cret"), ("alice.github.io", "alice", "AliceSecret")] {
            let approved = try run("git", ["credential", "approve"], stdin: "protocol=https\nhost=\(host)\nusername=\(user)\npassword=\(password)\n\n")
            XCTAssertEqual(approved.code, 0, approved.stderr)
        }
        let own = try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=git.example.com\n\n")
        XCTAssertTrue(own.stdout.contains("password=S3cret"), own.stdout + own.stderr)

        for (request, why) in [
            ("protocol=https\nhost=other.example.com\n", "a sibling host of the same site"),
            ("protocol=https\nhost=git.example.com:8443\n", "another port"),
            ("protocol=http\nhost=git.example.com\n", "plain http for an https login"),
            ("protocol=https\nhost=bob.github.io\n", "another user under a public suffix"),
            ("protocol=https\nhost=g\u{0456}t.example.com\n", "an IDN look-alike (Cyrillic i)"),
        ] {
            let result = try run("git", ["credential", "fill"], stdin: request + "\n")
            XCTAssertNotEqual(result.code, 124, "timed out: \(why)")
            XCTAssertFalse((result.stdout + result.stderr).contains("Secret"), "\(why): \(result.stdout)")
        }
        // useHttpPath: a per-repository credential answers only its own path.
        try run("git", ["config", "--global", "credential.useHttpPath", "true"])
        XCTAssertEqual(try run("git", ["credential", "approve"], stdin: "protocol=https\nhost=repo.example.org\npath=team/a.git\nusername=ci\npassword=RepoA\n\n").code, 0)
        XCTAssertTrue(try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=repo.example.org\npath=team/a.git\n\n").stdout.contains("password=RepoA"))
        XCTAssertFalse(try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=repo.example.org\npath=team/b.git\n\n").stdout.contains("RepoA"))
        try run("git", ["config", "--global", "--unset", "credential.useHttpPath"])

        // Rejecting the sibling erases nothing of gina's; approving it stores a separate login.
        XCTAssertEqual(try run("git", ["credential", "reject"], stdin: "protocol=https\nhost=other.example.com\nusername=gina\n\n").code, 0)
        XCTAssertTrue(try run("coffer", ["list", "git.example.com"]).stdout.contains("gina"))
        XCTAssertEqual(try run("git", ["credential", "approve"], stdin: "protocol=https\nhost=other.example.com\nusername=gina\npassword=Other\n\n").code, 0)
        XCTAssertTrue(try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=git.example.com\n\n").stdout.contains("password=S3cret"),
                      "approve for a sibling did not overwrite gina's login")
        XCTAssertTrue(try run("git", ["credential", "fill"], stdin: "protocol=https\nhost=other.example.com\n\n").stdout.contains("password=Other"))

        // docker: the registry's host and port exactly.
        let docker = "docker-credential-coffer"
        XCTAssertEqual(try run(docker, ["store"], stdin: #"{"ServerURL":"registry.example.com:5000","Username":"ci","Secret":"DockerSecret"}"#).code, 0)
        for other in ["registry.example.com", "registry.example.com:5001", "mirror.example.com:5000"] {
            let miss = try run(docker, ["get"], stdin: other + "\n")
            XCTAssertEqual(miss.code, 1, other)
            XCTAssertFalse(miss.stdout.contains("DockerSecret"), other)
        }
    }

    func testDockerProtocol() throws {
        let helper = "docker-credential-coffer"
        let locked = try run(helper, ["store"], stdin: #"{"ServerURL":"registry.example.com:5000","Username":"ci","Secret":"DockerSecret"}"#)
        XCTAssertEqual(locked.code, 1)
        XCTAssertTrue(locked.stdout.contains("locked"), locked.stdout)

        XCTAssertEqual(try run("coffer", ["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertEqual(try run(helper, ["store"], stdin: #"{"ServerURL":"registry.example.com:5000","Username":"ci","Secret":"DockerSecret"}"#).code, 0)
        XCTAssertEqual(try run(helper, ["store"], stdin: #"{"ServerURL":"https://index.docker.io/v1/","Username":"me","Secret":"HubSecret"}"#).code, 0)
        let got = try run(helper, ["get"], stdin: "registry.example.com:5000\n")
        XCTAssertEqual(got.code, 0, got.stdout)
        let object = try JSONSerialization.jsonObject(with: Data(got.stdout.utf8)) as? [String: String]
        XCTAssertEqual(object, ["ServerURL": "registry.example.com:5000", "Username": "ci", "Secret": "DockerSecret"])

        let list = try JSONSerialization.jsonObject(with: Data(try run(helper, ["list"]).stdout.utf8)) as? [String: String]
        XCTAssertEqual(list, ["registry.example.com:5000": "ci", "https://index.docker.io/v1/": "me"])

        XCTAssertEqual(try run(helper, ["erase"], stdin: "registry.example.com:5000\n").code, 0)
        let miss = try run(helper, ["get"], stdin: "registry.example.com:5000\n")
        XCTAssertEqual(miss.code, 1)
        XCTAssertEqual(miss.stdout, "credentials not found in native keychain\n")
        XCTAssertTrue(try run(helper, ["version"]).stdout.contains("coffer"))
    }

    func testImportOfARealKeePassXCExport() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/keepassxc-cli") else {
            return XCTFail("keepassxc-cli is missing; scripts/test installs Debian's keepassxc")
        }
        let database = home + "/test.kdbx"
        XCTAssertEqual(try run("/usr/bin/keepassxc-cli", ["db-create", "--set-password", database], stdin: "dbpw\ndbpw\n").code, 0)
        for (title, user, url, password) in [("Bank", "zoë", "https://bank.example.com/login", "pa,ss \"q\""), ("Mail", "bob", "https://mail.example.org", "x\u{00e9}y")] {
            let added = try run("/usr/bin/keepassxc-cli", ["add", "-u", user, "--url", url, "-p", database, title], stdin: "dbpw\n\(password)\n")
            XCTAssertEqual(added.code, 0, added.stderr)
        }
        let export = try run("/usr/bin/keepassxc-cli", ["export", "--format", "csv", database], stdin: "dbpw\n")
        XCTAssertEqual(export.code, 0, export.stderr)
        let csv = home + "/export.csv"
        try Data(export.stdout.utf8).write(to: URL(fileURLWithPath: csv))

        let imported = try run("coffer", ["import", csv, "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("KeePassXC CSV: 2 logins") && imported.stderr.contains("imported 2 items"), imported.stderr)
        let filled = try run("coffer", ["fill", "https://bank.example.com/login", "--json", "--password-stdin"], stdin: master + "\n")
        let object = try JSONSerialization.jsonObject(with: Data(filled.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["user"] as? String, "zoë")
        XCTAssertEqual(object?["password"] as? String, "pa,ss \"q\"")

        let again = try run("coffer", ["import", csv, "--password-stdin"], stdin: master + "\n")
        XCTAssertTrue(again.stderr.contains("skipped 2 duplicates"), again.stderr)
    }
}
