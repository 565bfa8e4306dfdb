import Coffer
@testable import CofferStore
@testable import CofferTerminalKit
import Foundation
import XCTest

/// A sync that survives a power loss (issue 51, item 7; SPEC.md §15.4): git's objects made
/// durable by git itself, a repository left with empty objects rebuilt from the vault's sealed
/// files, and what Coffer cannot mend on a remote said with what to do.
final class SyncPowerLossTests: SyncTestCase {
    /// Every loose object (and git's index) of the container emptied, as a power loss right
    /// after a sync leaves them when only their names reached the disk.
    func emptyGitObjects(in gitDirectory: String) throws {
        let objects = gitDirectory + "/objects"
        for directory in try FileManager.default.contentsOfDirectory(atPath: objects) where directory.count == 2 {
            for file in try FileManager.default.contentsOfDirectory(atPath: objects + "/" + directory) {
                let path = objects + "/" + directory + "/" + file
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
                try Data().write(to: URL(fileURLWithPath: path))
            }
        }
    }

    func testASyncRebuildsARepositoryAPowerLossLeftWithEmptyObjects() throws {
        let devices = devices(["B"])
        let (a, b) = (devices[0], devices[1])
        let first = a.add("first.example", "ann", password: "p1")
        a.sync()
        try emptyGitObjects(in: a.container + "/.git")
        try Data().write(to: URL(fileURLWithPath: a.container + "/.git/index"))
        let second = a.add("second.example", "bob", password: "p2")

        let repaired = a.run(["sync"])
        XCTAssertEqual(repaired.code, 0, repaired.stderr)
        XCTAssertTrue(repaired.stderr.contains("rebuilt from the vault's files and the remote; nothing was lost"), repaired.stderr)
        XCTAssertEqual(a.run(["verify"]).code, 0)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: a.container).contains { $0.hasPrefix(".git-damaged") },
                       "the damaged repository is gone")
        b.sync()
        XCTAssertEqual(b.items(), a.items())
        XCTAssertEqual(Set(b.run(["list", "--format", "{id}"]).stdout.split(separator: "\n").map(String.init)), [first, second])
        XCTAssertEqual(a.sync()["repairedRepository"] as? Bool, false, "once rebuilt, a sync is an ordinary one")
    }

    func testAStaleLockOnTheRemoteIsNamedWithWhatToDo() throws {
        let a = devices([])[0]
        _ = a.add("locked.example", "ann", password: "p")
        let lock = remote + "/refs/heads/main.lock"
        FileManager.default.createFile(atPath: lock, contents: nil)
        let locked = a.run(["sync"])
        XCTAssertEqual(locked.code, 75, locked.stderr)
        XCTAssertTrue(locked.stderr.contains("the remote's branch is locked: \(lock) exists"), locked.stderr)
        XCTAssertTrue(locked.stderr.contains("remove that file on the remote"), locked.stderr)
        try FileManager.default.removeItem(atPath: lock)
        XCTAssertEqual(a.sync()["pushed"] as? Bool, true)
    }

    /// A remote that moves before every push of this device, as a busy team's does: after ten
    /// rounds the sync gives up saying that — not that git failed or cannot reach the remote —
    /// and nothing is lost: the next sync pushes it.
    func testASyncOutpacedInEveryRoundSaysSoAndTheNextOnePushes() throws {
        let a = devices([])[0]
        _ = a.add("busy.example", "ann", password: "p")
        let vault = try unlockedVault(of: a.harness)
        nonisolated(unsafe) let test = self
        nonisolated(unsafe) var moves = 0
        let remote = self.remote
        XCTAssertThrowsError(try vault.sync(SyncOptions(environment: a.harness.environment, stepObserver: { step in
            guard step == .merged else { return }
            // Another device's push between this one's fetch and its push.
            let head = (try? test.git(["--git-dir", remote, "rev-parse", "main"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            let commit = (try? test.git(["--git-dir", remote, "commit-tree", head + "^{tree}", "-p", head, "-m", "another device"]))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            _ = try? test.git(["--git-dir", remote, "update-ref", "refs/heads/main", commit, head])
            moves += 1
        }))) { error in
            XCTAssertEqual(error as? SyncError, .outpaced(rounds: 10))
            let told = (error as? SyncError)?.failure
            XCTAssertEqual(told?.code, .unavailable)
            XCTAssertFalse(told?.message.contains("reach") ?? true, told?.message ?? "")
            XCTAssertTrue(told?.hint?.contains("nothing was lost") ?? false)
        }
        XCTAssertEqual(moves, 10, "one move of the remote per round")
        XCTAssertEqual(a.sync()["pushed"] as? Bool, true)
        XCTAssertTrue(try git(["--git-dir", remote, "log", "--format=%s", "main"]).contains("coffer: merge"))
    }

    func testARemoteDamagedByAPowerLossIsToldAndAFreshRemoteTakesTheVault() throws {
        let a = devices([])[0]
        _ = a.add("one.example", "ann", password: "p")
        a.sync()
        try emptyGitObjects(in: remote)
        _ = a.add("two.example", "bob", password: "q")
        let damaged = a.run(["sync"])
        XCTAssertEqual(damaged.code, 65, damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("the remote's repository is damaged"), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("coffer sync remote URL"), damaged.stderr)

        let fresh = root + "/fresh.git"
        try git(["init", "-q", "--bare", "-b", "main", fresh])
        XCTAssertEqual(a.run(["sync", "remote", fresh]).code, 0)
        a.sync()
        let c = SyncDevice("C", root: root)
        let cloned = c.harness.run(["clone", fresh, "--password-stdin", "--container", c.container], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        XCTAssertEqual(c.items(), a.items())
    }

    /// Every git Coffer starts, and the receive-pack of a remote on this machine, runs with git's
    /// own durability settings (a `git` first on PATH notes its arguments, then runs git).
    func testEveryGitRunsWithItsDurabilitySettings() throws {
        let a = devices([])[0]
        let bin = root + "/bin", log = root + "/git.log"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)'\nexec /usr/bin/git \"$@\"\n".write(toFile: bin + "/git", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/git")
        a.harness.environment["PATH"] = bin + ":/usr/bin:/bin"
        _ = a.add("durable.example", "ann", password: "p")
        a.sync()
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        XCTAssertGreaterThan(calls.count, 3)
        for call in calls where !call.hasPrefix("receive-pack") {
            XCTAssertTrue(call.contains("-c core.fsync=added -c core.fsyncMethod=batch"), String(call))
        }
        XCTAssertTrue(calls.contains { $0.contains("-c core.fsync=added -c core.fsyncMethod=batch receive-pack") },
                      "the remote's receive-pack too: \(calls)")
    }
}
