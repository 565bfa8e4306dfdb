import Foundation
import XCTest

/// Quick unlock by the system's authentication (issue 55, SPEC.md §8.6) against a real polkitd on
/// a private system bus (Tests/Helpers/polkit_session.sh, in a private mount namespace), with rules
/// answering yes, no, or asking an agent nobody runs; the `coffer` a person runs, at a terminal, as
/// a user of its own (`nobody`: polkit authorizes root for everything).
final class SystemAuthenticationTests: XCTestCase {
    var home = ""
    let person: uid_t = 65534
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("a private mount namespace for polkit's files needs root (CI runs as root)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/lib/polkit-1/polkitd"), "scripts/test installs polkitd")
        home = "/tmp/coffer-polkit-\(UUID().uuidString)"  // beside /tmp, where the person can reach it
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        XCTAssertEqual(chown(home, person, person), 0)
    }

    override func tearDown() {
        _ = try? run("yes", ["quick-unlock", "disable"])
        try? FileManager.default.removeItem(atPath: home)
    }

    /// `coffer arguments` at a pseudo-terminal (answering `answers`) where polkit answers `rule`.
    func run(_ rule: String, _ arguments: [String], answers: [String] = [], stdin: String? = nil) throws -> (code: Int32, transcript: String) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/coffer"
        let transcript = home + "/transcript-\(UUID().uuidString)"
        var options = ["--deadline", "30"]
        if let stdin {
            let path = home + "/stdin-\(UUID().uuidString)"
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(chown(path, person, person), 0)
            options += ["--stdin", path]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "--propagation", "private", Self.root + "/Tests/Helpers/polkit_session.sh", rule,
                             "setpriv", "--reuid=\(person)", "--regid=\(person)", "--clear-groups", "--",
                             "python3", Self.root + "/Tests/Helpers/pty_drive.py"] + options + [transcript, binary] + arguments + ["--container", home + "/vault"]
        process.environment = ["HOME": home, "XDG_STATE_HOME": home + "/state", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "TERM": "dumb"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(answers.map { $0 + "\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: transcript, encoding: .utf8)) ?? "")
    }

    func testPolkitsYesUnlocksWithoutAPasswordAndItsNoLeavesTheMasterPassword() throws {
        XCTAssertEqual(try run("yes", ["init", "--kdf", "interactive", "--password-stdin"], stdin: "MasterSecret9\n").code, 0)
        let refused = try run("no", ["quick-unlock", "enable", "--system", "--password-stdin"], stdin: "MasterSecret9\n")
        XCTAssertEqual(refused.code, 77, refused.transcript)
        XCTAssertTrue(refused.transcript.contains("refused"), refused.transcript)

        let enabled = try run("yes", ["quick-unlock", "enable", "--system", "--password-stdin"], stdin: "MasterSecret9\n")
        XCTAssertEqual(enabled.code, 0, enabled.transcript)
        XCTAssertTrue(try run("yes", ["status"]).transcript.contains("quick unlock system authentication, until the machine restarts"))

        let unlocked = try run("yes", ["unlock", "--no-agent", "--timeout", "1m"])
        XCTAssertEqual(unlocked.code, 0, unlocked.transcript)
        XCTAssertFalse(unlocked.transcript.contains("password"), "no prompt: \(unlocked.transcript)")
        XCTAssertEqual(try run("yes", ["lock"]).code, 0)

        let denied = try run("no", ["unlock", "--no-agent"], answers: ["MasterSecret9"])
        XCTAssertEqual(denied.code, 0, denied.transcript)
        XCTAssertTrue(denied.transcript.contains("the system's authentication was refused"), denied.transcript)
        XCTAssertTrue(denied.transcript.contains("Master password ("), denied.transcript)
        XCTAssertEqual(try run("yes", ["lock"]).code, 0)

        let nobody = try run("auth_self", ["unlock", "--no-agent"], answers: ["MasterSecret9"])
        XCTAssertEqual(nobody.code, 0, nobody.transcript)
        XCTAssertTrue(nobody.transcript.contains("no authentication agent answered"), nobody.transcript)
        XCTAssertEqual(try run("yes", ["lock"]).code, 0)

        // A script's supplied password is the master password: polkit is not asked.
        let script = try run("no", ["show", "--password-stdin", "nothing-here"], stdin: "MasterSecret9\n")
        XCTAssertFalse(script.transcript.contains("system's authentication"), script.transcript)
    }
}
