import Coffer
@testable import CofferStore
import Foundation
import XCTest

/// A later sync stages only what changed since the last commit (SPEC.md §15.4: the baseline),
/// and what it commits is exactly what staging the whole container would.
final class SyncBaselineTests: SyncTestCase {
    /// The tree `git add -A` of the whole container makes (into an index of its own), beside the
    /// tree the device's `main` holds.
    func trees(_ device: SyncDevice, file: StaticString = #filePath, line: UInt = #line) throws -> (full: String, committed: String) {
        let environment = ["HOME": root, "GIT_DIR": device.container + "/.git", "GIT_WORK_TREE": device.container, "GIT_INDEX_FILE": root + "/full-index"]
        try? FileManager.default.removeItem(atPath: root + "/full-index")
        for arguments in [["add", "-A", "--", "."]] {
            let result = try runTool("/usr/bin/git", ["-C", device.container] + arguments, environment: environment)
            XCTAssertEqual(result.code, 0, result.stderr, file: file, line: line)
        }
        let full = try runTool("/usr/bin/git", ["-C", device.container, "write-tree"], environment: environment).stdout
        let committed = try git(["rev-parse", "main^{tree}"], in: device.container)
        return (full.trimmingCharacters(in: .whitespacesAndNewlines), committed.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A sync that must stage from the baseline, committing what a full staging would.
    func syncFromBaseline(_ device: SyncDevice, file: StaticString = #filePath, line: UInt = #line) throws {
        let report = device.sync(file: file, line: line)
        XCTAssertNotNil(report["stagedPaths"] as? Int, "staged from the baseline", file: file, line: line)
        let (full, committed) = try trees(device, file: file, line: line)
        XCTAssertEqual(committed, full, "the commit holds the container as it is", file: file, line: line)
    }

    func testAddsEditsDeletionsAndAttachmentsAreCommittedFromTheBaselineAsAFullStagingWould() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let ids = (0..<6).map { a.add("site\($0).example", "user\($0)", password: "p\($0)") }
        try syncFromBaseline(a)
        a.setPassword(ids[0], "changed")
        XCTAssertEqual(a.run(["rm", ids[1], "--force"]).code, 0)
        try syncFromBaseline(a)
        XCTAssertTrue(FileManager.default.fileExists(atPath: a.container + "/tombstones/\(ids[1].prefix(2))/\(ids[1])"), "the deletion's tombstone")
        let attachment = root + "/notes.txt"
        try Data("attached".utf8).write(to: URL(fileURLWithPath: attachment))
        XCTAssertEqual(a.run(["attach", ids[2], attachment, "--name", "notes"]).code, 0)
        try syncFromBaseline(a)
        XCTAssertEqual(a.run(["attachment", "rm", ids[2], "notes"]).code, 0)
        XCTAssertEqual(a.run(["rm", ids[3], "--force"]).code, 0)
        try syncFromBaseline(a)
        b.sync()
        XCTAssertEqual(b.items(), a.items())
        XCTAssertFalse(b.items().contains { $0.hasPrefix(ids[1]) || $0.hasPrefix(ids[3]) })
    }

    /// `sync status` counts what the next sync would commit from the baseline (git looks at the
    /// paths it names, not at every file), the same count as `git status`.
    func testSyncStatusCountsFromTheBaselineAsGitStatusWould() throws {
        let a = devices([])[0]
        let ids = (0..<4).map { a.add("site\($0).example", "user\($0)", password: "p\($0)") }
        try syncFromBaseline(a)
        func counts(file: StaticString = #filePath, line: UInt = #line) throws -> [Int?] {
            let session = try SyncSession(vault: unlockedVault(of: a.harness), options: SyncOptions(environment: a.harness.environment), layer: nil)
            let fromBaseline = try session.uncommittedFilesFromBaseline()
            let status = try git(["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"], in: a.container)
            let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(a.run(["sync", "status", "--json"]).stdout.utf8)) as? [String: Any])
            return [fromBaseline, status.split(separator: "\n").count, shown["uncommittedFiles"] as? Int]
        }
        XCTAssertEqual(try counts(), [0, 0, 0])
        a.setPassword(ids[0], "changed")
        XCTAssertEqual(a.run(["rm", ids[1], "--force"]).code, 0)
        _ = a.add("new.example", "nina", password: "n")
        XCTAssertEqual(try counts(), [3, 3, 3], "an edit, a deletion and an add")
        let planted = a.container + "/records/\(ids[2].prefix(2))/" + String(ids[2].prefix(2)) + String(repeating: "0", count: 30)
        try Data("planted".utf8).write(to: URL(fileURLWithPath: planted))
        XCTAssertEqual(try counts(), [4, 4, 4], "a file no ledger entry names")
        try FileManager.default.removeItem(atPath: planted)
        try syncFromBaseline(a)
        XCTAssertEqual(try counts(), [0, 0, 0])
    }

    /// `sync status` writes nothing, git's index included: a status that rewrote the index (git's
    /// `add --dry-run` saves the stat data it refreshed) took the baseline with it, and the next
    /// sync staged all of the container (at a million records, 5 s where 1 s was due).
    func testSyncStatusLeavesTheBaselineForTheNextSync() throws {
        let a = devices([])[0]
        let ids = (0..<3).map { a.add("site\($0).example", "user\($0)", password: "p\($0)") }
        try syncFromBaseline(a)
        XCTAssertEqual(a.run(["rm", ids[0], "--force"]).code, 0)
        try syncFromBaseline(a)
        // A tombstone whose file was rewritten as it was: every tombstone is looked at, and git
        // refreshes the stat data it holds for it.
        let tombstone = a.container + "/tombstones/\(ids[0].prefix(2))/\(ids[0])"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: tombstone))
        sleep(1)
        try bytes.write(to: URL(fileURLWithPath: tombstone))
        a.setPassword(ids[1], "changed")
        let index = { try FileManager.default.attributesOfItem(atPath: a.container + "/.git/index")[.systemFileNumber] as? Int }
        let before = try index()
        let status = a.run(["sync", "status", "--json"])
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        XCTAssertEqual(shown["uncommittedFiles"] as? Int, 1, "the edit; the tombstone holds what it held")
        XCTAssertEqual(try index(), before, "git's index is the file the baseline names")
        try syncFromBaseline(a)
    }

    func testAMergeKeepsTheBaselineAndWhatTheMergeWroteIsNotLost() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let shared = a.add("shared.example", "sam", password: "s1")
        a.sync(); b.sync()
        a.setPassword(shared, "from A")
        let fromA = a.add("a.example", "ann", password: "a1")
        a.sync()
        let fromB = b.add("b.example", "bob", password: "b1")
        try syncFromBaseline(b)  // commits its own add, then merges A's
        b.setPassword(fromB, "b2")
        try syncFromBaseline(b)  // the merge moved the baseline along
        a.sync()
        XCTAssertEqual(a.items(), b.items())
        XCTAssertEqual(b.record(shared)["password"] as? String, "from A")
        XCTAssertEqual(a.record(fromB)["password"] as? String, "b2")
        XCTAssertEqual(b.record(fromA)["password"] as? String, "a1")
    }

    func testWithoutATrustworthyBaselineTheSyncStagesEverything() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("one.example", "olga", password: "o1")
        try syncFromBaseline(a)
        let state = try XCTUnwrap(FileManager.default.enumerator(atPath: a.harness.environment["XDG_STATE_HOME"]!)?.allObjects as? [String])
        let copies = state.filter { $0.contains("/sync-ledger-") }
        XCTAssertFalse(copies.isEmpty, "the ledger shards committed are kept")

        // git's index written by another git: the baseline no longer says what it holds.
        a.setPassword(id, "o2")
        try git(["read-tree", "main"], in: a.container)
        XCTAssertNil(a.sync()["stagedPaths"] as? Int ?? nil)
        // A ledger copy gone: the records that changed since cannot be told.
        a.setPassword(id, "o3")
        for copy in copies { try? FileManager.default.removeItem(atPath: a.harness.environment["XDG_STATE_HOME"]! + "/" + copy) }
        let state2 = try XCTUnwrap(FileManager.default.enumerator(atPath: a.harness.environment["XDG_STATE_HOME"]!)?.allObjects as? [String])
        for copy in state2.filter({ $0.contains("/sync-ledger-") }) {
            try FileManager.default.removeItem(atPath: a.harness.environment["XDG_STATE_HOME"]! + "/" + copy)
        }
        XCTAssertNil(a.sync()["stagedPaths"] as? Int ?? nil)
        let (full, committed) = try trees(a)
        XCTAssertEqual(committed, full)
        b.sync()
        XCTAssertEqual(b.record(id)["password"] as? String, "o3")
        // The full staging left a baseline again.
        a.setPassword(id, "o4")
        try syncFromBaseline(a)
    }

    /// A record file that no Coffer transaction wrote (planted after the last sync) is found in
    /// its changed directory and refused, as a full staging refuses it.
    func testAFilePlantedAfterTheLastSyncIsStillRefused() throws {
        let devices = devices()
        let a = devices[0]
        _ = a.add("kept.example", "kim", password: "k")
        try syncFromBaseline(a)
        let foreign = SyncDevice("foreign", root: root)
        foreign.harness.initVault()
        let foreignID = foreign.add("evil.example", "eve", password: "x")
        let shard = a.container + "/records/\(foreignID.prefix(2))"
        try FileManager.default.createDirectory(atPath: shard, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: foreign.container + "/records/\(foreignID.prefix(2))/\(foreignID)", toPath: shard + "/\(foreignID)")
        let refused = a.run(["sync"])
        XCTAssertEqual(refused.code, 65, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(foreignID), refused.stderr)
        try FileManager.default.removeItem(atPath: shard + "/\(foreignID)")
        XCTAssertNil(a.sync()["stagedPaths"] as? Int ?? nil, "the refused sync left git's index holding the file: staged whole")
        _ = a.add("next.example", "ned", password: "n")
        try syncFromBaseline(a)
        // Beside the shard directories: the full staging it falls back to refuses it.
        try Data("x".utf8).write(to: URL(fileURLWithPath: a.container + "/records/notes.txt"))
        let stray = a.run(["sync"])
        XCTAssertEqual(stray.code, 65, stray.stderr)
        XCTAssertTrue(stray.stderr.contains("records/notes.txt"), stray.stderr)
    }

    /// A record file removed by another program (its ledger entry still there) is committed as a
    /// deletion with its tombstone, as a full staging commits it.
    func testARecordFileRemovedByHandIsCommittedWithItsTombstone() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let gone = a.add("gone.example", "gus", password: "g")
        _ = a.add("kept.example", "kim", password: "k")
        try syncFromBaseline(a)
        b.sync()
        try FileManager.default.removeItem(atPath: a.container + "/records/\(gone.prefix(2))/\(gone)")
        try syncFromBaseline(a)
        let tombstone = "tombstones/\(gone.prefix(2))/\(gone)"
        XCTAssertFalse(try git(["ls-tree", "main", "--", tombstone], in: a.container).isEmpty, "the tombstone is committed")
        b.sync()
        XCTAssertFalse(b.items().contains { $0.hasPrefix(gone) })
    }

    /// git 2.39 with batch fsync lost a large file's temporary pack when a small file's object
    /// was written first in the same command: small and large attachments added together reach
    /// the other device, staged from the baseline and staged whole.
    func testSmallAndLargeAttachmentsStagedTogetherReachTheOtherDevice() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("files.example", "fay", password: "f")
        a.sync()
        func attachSeveral(_ round: Int) throws {
            for index in 0..<5 {
                let path = root + "/file-\(round)-\(index)"
                let size = index == 2 ? 3 << 20 : 1 << 10
                try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) }).write(to: URL(fileURLWithPath: path))
                XCTAssertEqual(a.run(["attach", id, path]).code, 0)
            }
        }
        try attachSeveral(1)
        try syncFromBaseline(a)
        try attachSeveral(2)
        let state = a.harness.environment["XDG_STATE_HOME"]!
        for name in try XCTUnwrap(FileManager.default.enumerator(atPath: state)?.allObjects as? [String]) where name.contains("/sync-baseline-") {
            try FileManager.default.removeItem(atPath: state + "/" + name)
        }
        XCTAssertNil(a.sync()["stagedPaths"] as? Int ?? nil, "staged whole")
        b.sync()
        let listed = b.run(["attachment", "list", id])
        XCTAssertEqual(listed.code, 0, listed.stderr)
        XCTAssertEqual(listed.stdout.split(separator: "\n").count, 10, listed.stdout)
    }
}
