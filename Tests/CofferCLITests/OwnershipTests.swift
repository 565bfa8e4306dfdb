import Foundation
import XCTest

/// SPEC.md §3.5 as another user sees it: the real `coffer`, run as `nobody` through `setpriv`
/// (CI runs as root, so the test switches users itself). A container, or any directory in it,
/// that is not the user's own or that others may enter is refused with exit 78, and nothing is
/// read from it.
final class OwnershipTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }
    var base = ""
    let nobody: uid_t = 65534

    override func setUpWithError() throws {
        guard geteuid() == 0 else { throw XCTSkip("switching to another user needs root (CI runs as root)") }
        var template = Array("/tmp/coffer-ownership-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
        base = String(cString: made)  // directly in /tmp, which nobody can traverse
        chmod(base, 0o755)
        XCTAssertEqual(chown(base, nobody, nobody), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: base) }

    struct Output { let code: Int32; let stdout: String; let stderr: String }

    /// `coffer ARGS` as `user` (nobody unless 0), with a private HOME under `base`.
    func coffer(_ arguments: [String], as user: uid_t? = nil, stdin: String = "") throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        let uid = user ?? nobody
        process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", Self.products + "/coffer"] + arguments
        process.environment = [
            "HOME": base + "/home", "XDG_STATE_HOME": base + "/home/state", "COFFER_CONTAINER": base + "/vault", "PATH": "/usr/bin:/bin",
        ]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(code: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    func testADirectoryThatIsNotTheUsersOwnOrIsOpenToOthersIsRefused() throws {
        let master = "nobody's master\n"
        XCTAssertEqual(try coffer(["init", "--kdf", "interactive", "--password-stdin"], stdin: master).code, 0)
        let id = try coffer(["add", "example.com", "nora", "--password-stdin"], stdin: master + "NoraPassword\n").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(id.count, 32)
        XCTAssertEqual(try coffer(["list"]).code, 0, "nobody's own vault works as nobody")
        let shard = base + "/vault/records/" + id.prefix(2)

        for (path, change, why) in [
            (shard, { chown(shard, 0, 0) }, "a record shard owned by root"),
            (shard, { chmod(shard, 0o750) }, "a record shard open to its group"),
            (base + "/vault/index", { chmod(self.base + "/vault/index", 0o705) }, "the index open to others"),
            (base + "/vault", { chown(self.base + "/vault", 0, 0) }, "the container owned by root"),
        ] as [(String, () -> Int32, String)] {
            var before = stat()
            stat(path, &before)
            XCTAssertEqual(chmod(path, 0o755), 0)  // readable by nobody, so only the check can refuse it
            XCTAssertEqual(change(), 0)
            let show = try coffer(["show", id, "--password-stdin"], stdin: master)
            XCTAssertEqual(show.code, 78, "\(why): \(show.stderr)")
            XCTAssertTrue(show.stderr.contains(path), "\(why): names the directory: \(show.stderr)")
            XCTAssertFalse(show.stdout.contains("NoraPassword"), why)
            let verify = try coffer(["verify"])
            XCTAssertNotEqual(verify.code, 0, why)
            XCTAssertTrue((verify.stdout + verify.stderr).contains(path), "\(why): verify names it: \(verify.stdout)\(verify.stderr)")
            chown(path, before.st_uid, before.st_gid)
            chmod(path, before.st_mode & 0o7777)
        }
        XCTAssertEqual(try coffer(["show", id, "--password-stdin"], stdin: master).stdout.split(separator: "\n").first, "NoraPassword",
                       "restored: the vault works again")

        // And the other way round: root does not open a container that belongs to nobody.
        let asRoot = try coffer(["list", "--password-stdin"], as: 0, stdin: master)
        XCTAssertEqual(asRoot.code, 78, asRoot.stderr)
        XCTAssertTrue(asRoot.stderr.contains("belongs to uid 65534"), asRoot.stderr)
    }
}
