import Foundation
import XCTest

/// The real `coffer` binary in separate processes, without a controlling terminal (setsid), the
/// way scripts, cron and a second shell run it.
final class EndToEndTests: XCTestCase {
    var home = ""
    var environment: [String: String] = [:]
    let master = "end to end master"

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        environment = [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data",
            "COFFER_CONTAINER": home + "/vault", "PATH": "/usr/bin:/bin",
        ]
    }

    override func tearDown() {
        _ = try? coffer(["lock"])
        try? FileManager.default.removeItem(atPath: home)
    }

    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/coffer"
    }

    @discardableResult
    func coffer(_ arguments: [String], stdin: String = "") throws -> RunResult {
        try runProcess("/usr/bin/setsid", ["-w", Self.binary] + arguments, stdin: stdin, environment: environment)
    }

    func testMainFlowsAcrossProcesses() throws {
        XCTAssertEqual(try coffer(["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
        let add = try coffer(["add", "github.com", "alice", "--password-stdin"], stdin: "\(master)\nGitHubSecret\n")
        XCTAssertEqual(add.code, 0, add.stderr)

        // Locked: no terminal, so the provider's silent path answers userInteractionRequired.
        let locked = try coffer(["fill", "https://github.com/login"])
        XCTAssertEqual(locked.code, 75)
        XCTAssertEqual(locked.stdout, "")
        XCTAssertFalse(locked.stderr.contains("GitHubSecret"))

        // One process unlocks; another fills silently; a third locks; the next is refused again.
        XCTAssertEqual(try coffer(["unlock", "--timeout", "5m", "--password-stdin"], stdin: master + "\n").code, 0)
        let status = try coffer(["status", "--json"])
        XCTAssertTrue(status.stdout.contains("\"locked\":false"), status.stdout)
        let filled = try coffer(["fill", "github.com", "--no-interaction"])
        XCTAssertEqual(filled.code, 0, filled.stderr)
        XCTAssertEqual(filled.stdout, "GitHubSecret\n")
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        let relocked = try coffer(["fill", "github.com"])
        XCTAssertEqual(relocked.code, 75)
        XCTAssertEqual(relocked.stdout, "")

        // list works while locked and never prints a password.
        let list = try coffer(["list", "--json"])
        XCTAssertEqual(list.code, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("alice"))
        XCTAssertFalse(list.stdout.contains("GitHubSecret"))

        // Interactive path with the password supplied on stdin; wrong password is 77.
        XCTAssertEqual(try coffer(["fill", "github.com", "--password-stdin"], stdin: master + "\n").stdout, "GitHubSecret\n")
        XCTAssertEqual(try coffer(["fill", "github.com", "--password-stdin"], stdin: "wrong\n").code, 77)
        XCTAssertEqual(try coffer(["fill", "unknown.example", "--password-stdin"], stdin: master + "\n").code, 66)
    }

    func testHelpAndVersion() throws {
        XCTAssertEqual(try coffer(["--version"]).code, 0)
        let help = try coffer(["help", "fill"])
        XCTAssertTrue(help.stdout.contains("Usage: coffer fill"))
        XCTAssertEqual(try coffer([]).code, 64)
    }
}

/// Process hygiene, checked from outside through /proc while a `coffer` process holds the key.
final class ProcessHygieneTests: XCTestCase {
    func testNoSecretInArgvOrEnvironmentAndNoCoreDumps() throws {
        let home = FileManager.default.temporaryDirectory.path + "/coffer-proc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home, "XDG_STATE_HOME": home + "/state", "COFFER_CONTAINER": home + "/vault", "PATH": "/usr/bin:/bin"]
        let master = "ProcMasterSecret"
        let binary = EndToEndTests.binary

        /// Starts `coffer ARGUMENTS` with the master password as the first line of its stdin.
        func launch(_ arguments: [String]) throws -> (Process, Pipe) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.environment = environment
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data((master + "\n").utf8))
            return (process, input)
        }

        let (initProcess, initInput) = try launch(["init", "--kdf", "interactive", "--password-stdin"])
        try initInput.fileHandleForWriting.close()
        initProcess.waitUntilExit()
        XCTAssertEqual(initProcess.terminationStatus, 0)

        // `add` reads the master password, unlocks, then waits for the credential's password.
        let (add, input) = try launch(["add", "example.com", "alice", "--password-stdin"])
        // Wait until it has unlocked: Argon2id (interactive) holds the key within a second or so.
        var limits = ""
        for _ in 0..<100 {
            Thread.sleep(forTimeInterval: 0.05)
            limits = (try? String(contentsOfFile: "/proc/\(add.processIdentifier)/limits", encoding: .utf8)) ?? ""
            if limits.contains("Max core file size        0") { break }
        }
        let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(add.processIdentifier)/cmdline"))) ?? Data()
        let environ = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(add.processIdentifier)/environ"))) ?? Data()
        let status = (try? String(contentsOfFile: "/proc/\(add.processIdentifier)/status", encoding: .utf8)) ?? ""
        input.fileHandleForWriting.write(Data("SitePassword\n".utf8))
        try input.fileHandleForWriting.close()
        add.waitUntilExit()
        XCTAssertEqual(add.terminationStatus, 0)

        XCTAssertFalse(cmdline.isEmpty, "could not read /proc/PID/cmdline")
        XCTAssertFalse(String(decoding: cmdline, as: UTF8.self).contains(master))
        XCTAssertFalse(String(decoding: environ, as: UTF8.self).contains(master))
        XCTAssertTrue(limits.contains("Max core file size        0                    0"), "core dumps enabled:\n\(limits)")
        XCTAssertFalse(status.isEmpty)
    }
}
