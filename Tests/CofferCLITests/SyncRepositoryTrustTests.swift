import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// The container is untrusted (SPEC.md §2, §15.1): nothing in its `.git` may choose a program
/// for git to run or a path outside it, and a clone never disturbs another container of the
/// same vault on this device (issue 28, items 2–4).
final class SyncRepositoryTrustTests: SyncTestCase {
    /// A program that leaves a mark when anything runs it.
    func plantedProgram() throws -> (path: String, mark: String) {
        let mark = root + "/ran"
        let path = root + "/planted.sh"
        try "#!/bin/sh\ntouch '\(mark)'\nexit 1\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, mark)
    }

    func testKeysThatRunProgramsAreRefusedBeforeGitRuns() throws {
        let a = devices([])[0]
        _ = a.add("config.example", "cora", password: "c")
        let (program, mark) = try plantedProgram()
        try "[core]\n\tpager = \(program)\n".write(toFile: root + "/included.config", atomically: true, encoding: .utf8)
        let planted: [(key: String, value: String)] = [
            ("remote.origin.uploadpack", program), ("remote.origin.receivepack", program), ("core.sshCommand", program),
            ("protocol.ext.allow", "always"), ("credential.helper", "!" + program), ("core.askPass", program),
            ("http.proxy", "http://127.0.0.1:9"), ("include.path", root + "/included.config"), ("core.fsmonitor", program),
            ("url.ext::\(program).insteadOf", remote), ("remote.origin.url", "ext::" + program),
        ]
        let config = a.container + "/.git/config"
        let genuine = try String(contentsOfFile: config, encoding: .utf8)
        for (key, value) in planted {
            try git(["config", "--file", config, key, value])
            let result = a.run(["sync"])
            XCTAssertEqual(result.code, 65, "\(key): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(key.lowercased().split(separator: ".").first!), "\(key) named: \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: mark), "\(key) ran a program")
            XCTAssertEqual(a.harness.run(["sync", "status"]).code, 65, "\(key): status runs git too")
            try genuine.write(toFile: config, atomically: true, encoding: .utf8)
        }
        a.sync()

        // Paths outside the container: alternates and a common directory.
        for file in ["objects/info/alternates", "commondir"] {
            let path = a.container + "/.git/" + file
            try (root + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertEqual(a.run(["sync"]).code, 65, file)
            try FileManager.default.removeItem(atPath: path)
        }

        // The repair: 'sync remote' writes the whole file anew without running git on it.
        try git(["config", "--file", config, "core.sshCommand", program])
        XCTAssertEqual(a.run(["sync", "remote", remote]).code, 0)
        a.sync()
        XCTAssertFalse(FileManager.default.fileExists(atPath: mark))
    }

    func testAConfigFromBeforeCofferOwnedItIsAdoptedWhenPlain() throws {
        let a = devices([])[0]
        // As an older Coffer left it: git's own file, and no remote pinned on this device.
        let config = a.container + "/.git/config"
        try FileManager.default.removeItem(atPath: config)
        try git(["init", "-q", "--shared=0600", a.container])
        try git(["-C", a.container, "remote", "add", "origin", remote])
        let state = a.harness.environment["XDG_STATE_HOME"]! + "/coffer/vaults"
        for vault in try FileManager.default.contentsOfDirectory(atPath: state) {
            for file in try FileManager.default.contentsOfDirectory(atPath: state + "/" + vault) where file.hasPrefix("sync-remote-") {
                try FileManager.default.removeItem(atPath: state + "/" + vault + "/" + file)
            }
        }
        _ = a.add("legacy.example", "leo", password: "l")
        a.sync()
        let adopted = try String(contentsOfFile: config, encoding: .utf8)
        XCTAssertTrue(adopted.contains("logallrefupdates = false") && adopted.contains("url = \(remote)\n"), "rewritten as Coffer's: " + adopted)
        // Not pinned and not plain: refused.
        try git(["config", "--file", config, "core.sshCommand", "true"])
        for vault in try FileManager.default.contentsOfDirectory(atPath: state) {
            for file in try FileManager.default.contentsOfDirectory(atPath: state + "/" + vault) where file.hasPrefix("sync-remote-") {
                try FileManager.default.removeItem(atPath: state + "/" + vault + "/" + file)
            }
        }
        XCTAssertEqual(a.run(["sync"]).code, 65)
    }

    /// A clone on the device that has the vault, failed or not, leaves the vault usable.
    func testAClonePassedOrFailedNeverLocksOutTheVaultBesideIt() throws {
        let a = devices([])[0]
        let id = a.add("clone.example", "cleo", password: "c1")
        a.sync()
        let second = root + "/A-second"
        let cloned = a.harness.run(["clone", remote, "--password-stdin", "--container", second], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        XCTAssertEqual(a.run(["show", id]).code, 0, "the first container after a second clone: " + a.run(["show", id]).stderr)

        // A hostile remote: a flipped byte in a record makes the clone fail.
        let attacker = try attackerClone()
        let recordPath = attacker + "/records/" + id.prefix(2) + "/" + id
        var bytes = try Data(contentsOf: URL(fileURLWithPath: recordPath))
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: URL(fileURLWithPath: recordPath))
        try git(["commit", "-q", "-am", "flipped"], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        let third = root + "/A-third"
        let failed = a.harness.run(["clone", remote, "--password-stdin", "--container", third], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(failed.code, 65, failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: third))
        let shown = a.run(["show", id])
        XCTAssertEqual(shown.code, 0, "the vault after a failed clone: " + shown.stderr)
    }

    func testATamperedRemoteSealIsRefusedBesideAnUnchangedHeader() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        _ = a.add("seal.example", "sam", password: "s")
        a.sync(); b.sync()
        let attacker = try attackerClone()
        let sealPath = attacker + "/vault.seal"
        var seal = try Data(contentsOf: URL(fileURLWithPath: sealPath))
        seal[seal.count - 1] ^= 1
        try seal.write(to: URL(fileURLWithPath: sealPath))
        try git(["commit", "-q", "-am", "tampered seal"], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        let refused = b.run(["sync"])
        XCTAssertEqual(refused.code, 65, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("vault.seal"), refused.stderr)
        // Removed altogether: refused too.
        try git(["rm", "-q", "vault.seal"], in: attacker)
        try git(["commit", "-q", "-m", "no seal"], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        XCTAssertEqual(b.run(["sync"]).code, 65)
    }
}
