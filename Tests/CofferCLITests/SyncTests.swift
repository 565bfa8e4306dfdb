import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// One device of a synced vault: its own container and its own `XDG_STATE_HOME`.
final class SyncDevice {
    let harness: CLIHarness
    let name: String
    /// The master password this device's commands give.
    var master = CLIHarness.master

    init(_ name: String, root: String) {
        self.name = name
        harness = CLIHarness(base: root + "/" + name)
    }

    var container: String { harness.container }

    @discardableResult
    func run(_ arguments: [String], stdin: String = "") -> RunResult {
        harness.run(arguments + ["--password-stdin"], stdin: master + "\n" + stdin)
    }

    /// `coffer sync --json`, which must succeed; its report.
    @discardableResult
    func sync(_ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        let result = run(["sync", "--json"] + extra)
        XCTAssertEqual(result.code, 0, "\(name): \(result.stderr)", file: file, line: line)
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    func add(_ service: String, _ user: String, password: String) -> String {
        let result = run(["add", service, user], stdin: password + "\n")
        precondition(result.code == 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func setPassword(_ id: String, _ password: String, file: StaticString = #filePath, line: UInt = #line) {
        let result = run(["edit", id, "--new-password"], stdin: password + "\n")
        XCTAssertEqual(result.code, 0, result.stderr, file: file, line: line)
    }

    /// Every item as (name, services, user, password, history, notes), sorted: what two devices
    /// that converged agree on.
    func items() -> [String] {
        let listing = run(["list", "--format", "{id}"])
        precondition(listing.code == 0, "\(name): \(listing.stderr)")
        let ids = Set(listing.stdout.split(separator: "\n").map(String.init))
        return ids.map { id in
            let document = record(id)
            let history = (document["passwordHistory"] as? [[String: Any]] ?? []).compactMap { $0["password"] as? String }
            return "\(id) \(document["name"] ?? "") \(document["user"] ?? "") \(document["password"] ?? "") [\(history.joined(separator: ","))] \(document["notes"] ?? "")"
        }.sorted()
    }

    func record(_ id: String) -> [String: Any] {
        let shown = run(["show", id, "--json"])
        precondition(shown.code == 0, "\(name) show \(id): \(shown.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(shown.stdout.utf8))) as? [String: Any] ?? [:]
    }

    /// Every password a record holds, current and past.
    func passwords(_ id: String) -> Set<String> {
        let document = record(id)
        var all = Set((document["passwordHistory"] as? [[String: Any]] ?? []).compactMap { $0["password"] as? String })
        if let current = document["password"] as? String { all.insert(current) }
        return all
    }
}

/// Devices with separate containers and device state, and one bare repository between them.
class SyncTestCase: XCTestCase {
    var root = ""
    var remote = ""

    override func setUpWithError() throws {
        root = ScratchDirectories.make(prefix: "coffer-sync")
        remote = root + "/remote.git"
        try git(["init", "-q", "--bare", "-b", "main", remote])
    }

    @discardableResult
    func git(_ arguments: [String], in directory: String? = nil) throws -> String {
        let result = try runTool("/usr/bin/git", (directory.map { ["-C", $0] } ?? []) + arguments, environment: [
            "HOME": root, "GIT_AUTHOR_NAME": "attacker", "GIT_AUTHOR_EMAIL": "a@example.invalid",
            "GIT_COMMITTER_NAME": "attacker", "GIT_COMMITTER_EMAIL": "a@example.invalid",
        ])
        guard result.code == 0 else { throw XCTSkip("git \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
        return result.stdout
    }

    /// A first device with a vault synced to the remote, and `others` cloned from it.
    func devices(_ others: [String] = ["B"]) -> [SyncDevice] {
        let first = SyncDevice("A", root: root)
        first.harness.initVault()
        XCTAssertEqual(first.run(["sync", "remote", remote]).code, 0)
        first.sync()
        return [first] + others.map { name in
            let device = SyncDevice(name, root: root)
            let cloned = device.harness.run(["clone", remote, "--password-stdin", "--container", device.container], stdin: CLIHarness.master + "\n", container: false)
            XCTAssertEqual(cloned.code, 0, cloned.stderr)
            return device
        }
    }

    /// A scratch clone of the remote for an attacker with push access.
    func attackerClone() throws -> String {
        let directory = root + "/attacker-\(UUID().uuidString.prefix(8))"
        try git(["clone", "-q", remote, directory])
        return directory
    }
}

/// Sync through git between devices (SPEC.md §15): merges, attacks from the remote, and what
/// git may see.
final class SyncTests: SyncTestCase {

    // MARK: Merges

    func testAddsAndEditsOnThreeDevicesAllLand() throws {
        let devices = devices(["B", "C"])
        let (a, b, c) = (devices[0], devices[1], devices[2])
        let shared = a.add("shared.example", "sam", password: "shared-1")
        a.sync(); b.sync(); c.sync()
        let fromA = a.add("a.example", "ann", password: "pa")
        let fromB = b.add("b.example", "bob", password: "pb")
        let fromC = c.add("c.example", "cat", password: "pc")
        a.setPassword(shared, "shared-from-a")
        b.setPassword(fromB, "pb-2")
        for device in devices { device.sync() }
        for device in devices { device.sync() }
        XCTAssertEqual(a.items(), b.items())
        XCTAssertEqual(a.items(), c.items())
        XCTAssertEqual(a.items().count, 4)
        XCTAssertEqual(c.record(shared)["password"] as? String, "shared-from-a")
        XCTAssertEqual(c.record(fromB)["password"] as? String, "pb-2")
        XCTAssertEqual(b.record(fromA)["password"] as? String, "pa")
        XCTAssertEqual(a.record(fromC)["password"] as? String, "pc")
        for device in devices { XCTAssertEqual(device.run(["verify"]).code, 0, device.name) }
    }

    /// A first sync packs the records with `git fast-import` before `git add` (which then only
    /// hashes): no loose object per record, every record in the pack, and a clone has them all.
    func testAFirstSyncPacksTheRecordsInsteadOfALooseObjectEach() throws {
        let a = SyncDevice("A", root: root)
        a.harness.initVault()
        let csv = root + "/many.csv"
        try ("name,url,username,password,note\n" + (0..<300).map { "s\($0),https://s\($0).example/,u\($0),p\($0),\n" }.joined())
            .write(toFile: csv, atomically: true, encoding: .utf8)
        XCTAssertEqual(a.run(["import", csv]).code, 0)
        XCTAssertEqual(a.run(["sync", "remote", remote]).code, 0)
        a.sync()
        let counts = Dictionary(uniqueKeysWithValues: try git(["count-objects", "-v"], in: a.container).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 ? (parts[0], Int(parts[1]) ?? -1) : nil
        })
        XCTAssertLessThan(counts["count"] ?? .max, 300, "loose objects: trees, the commit and the header files, not the records")
        XCTAssertGreaterThanOrEqual(counts["in-pack"] ?? 0, 300)
        let b = SyncDevice("B", root: root)
        let cloned = b.harness.run(["clone", remote, "--password-stdin", "--container", b.container], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        XCTAssertEqual(b.items(), a.items())
        XCTAssertEqual(b.items().count, 300)
        XCTAssertEqual(a.run(["verify"]).code, 0)
    }

    func testTheSameRecordEditedOnBothSidesKeepsBothPasswords() {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("bank.example", "bea", password: "original")
        a.sync(); b.sync()
        a.setPassword(id, "from-a")
        b.setPassword(id, "from-b")
        a.sync()
        let report = b.sync()
        XCTAssertEqual(report["conflicts"] as? Int, 1)
        XCTAssertEqual(report["conflictCopies"] as? Int, 0, "only the password differed")
        a.sync()
        XCTAssertEqual(a.items(), b.items())
        XCTAssertEqual(a.passwords(id), ["original", "from-a", "from-b"])
        XCTAssertEqual(a.record(id)["revision"] as? Int, 3, "above both edits")
    }

    func testConflictingEditsOfMoreThanThePasswordKeepACopy() {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("mail.example", "mo", password: "p0")
        a.sync(); b.sync()
        XCTAssertEqual(a.run(["edit", id, "--user", "mo-a"]).code, 0)
        XCTAssertEqual(b.run(["edit", id, "--user", "mo-b"]).code, 0)
        a.sync()
        XCTAssertEqual(b.sync()["conflictCopies"] as? Int, 1)
        a.sync()
        XCTAssertEqual(a.items(), b.items())
        XCTAssertTrue(a.items().contains { $0.contains(" mo-a ") } && a.items().contains { $0.contains(" mo-b ") }, "\(a.items())")
        XCTAssertTrue(a.items().contains { $0.contains("(conflict ") }, "the copy is named so a person sees it")
    }

    func testAnEditBeatsADeleteAndADeleteStaysDeleted() {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let edited = a.add("edit.example", "ed", password: "e1")
        let deleted = a.add("gone.example", "gil", password: "g1")
        a.sync(); b.sync()
        XCTAssertEqual(a.run(["rm", edited, "--force"]).code, 0)
        b.setPassword(edited, "e2")
        XCTAssertEqual(b.run(["rm", deleted, "--force"]).code, 0)
        a.sync(); b.sync(); a.sync()
        XCTAssertEqual(a.items(), b.items())
        XCTAssertEqual(a.record(edited)["password"] as? String, "e2", "the edit came back to the device that deleted it")
        XCTAssertFalse(a.items().contains { $0.hasPrefix(deleted) })
    }

    func testAPasswordChangeReachesTheOtherDevicesAndAForgedHeaderDoesNot() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("pw.example", "pia", password: "p")
        a.sync(); b.sync()
        XCTAssertEqual(a.run(["passwd"], stdin: "new master\n").code, 0)
        a.master = "new master"
        a.sync()
        let report = b.sync()
        XCTAssertEqual(report["headerAdopted"] as? Bool, true)
        let withNew = b.harness.run(["show", id, "--json", "--password-stdin"], stdin: "new master\n")
        XCTAssertEqual(withNew.code, 0, withNew.stderr)
        XCTAssertEqual(b.harness.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 77, "the old password is gone")

        // A header wrapping another key under a password the attacker knows, with no seal of
        // this vault's: refused, and B keeps its header.
        let attacker = try attackerClone()
        let forger = SyncDevice("forger", root: root)
        forger.harness.initVault()
        var forged = try Data(contentsOf: URL(fileURLWithPath: forger.container + "/vault.coffer"))
        let genuine = try Data(contentsOf: URL(fileURLWithPath: attacker + "/vault.coffer"))
        forged.replaceSubrange(8..<24, with: genuine[8..<24])  // this vault's id, the attacker's key
        try forged.write(to: URL(fileURLWithPath: attacker + "/vault.coffer"))
        try git(["commit", "-q", "-am", "forged header"], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        let refused = b.harness.run(["sync", "--password-stdin"], stdin: "new master\n")
        XCTAssertEqual(refused.code, 65, refused.stderr)
        XCTAssertEqual(b.harness.run(["show", id, "--password-stdin"], stdin: "new master\n").code, 0)
    }

    func testADeletionAfterAnEditOutlivedAnOldTombstoneStillReachesTheOthers() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("twice.example", "tia", password: "t1")
        a.sync(); b.sync()
        XCTAssertEqual(a.run(["rm", id, "--force"]).code, 0)
        b.setPassword(id, "t2")
        a.sync()
        let tombstone = a.container + "/tombstones/\(id.prefix(2))/\(id)"
        let oldTombstone = try Data(contentsOf: URL(fileURLWithPath: tombstone))
        b.sync(); a.sync()
        XCTAssertEqual(a.record(id)["password"] as? String, "t2", "the edit beat the deletion")
        XCTAssertFalse(FileManager.default.fileExists(atPath: tombstone))
        // As a crash between the merge and the tombstone's removal would leave it:
        try oldTombstone.write(to: URL(fileURLWithPath: tombstone))
        XCTAssertEqual(a.run(["rm", id, "--force"]).code, 0)
        a.sync(); b.sync()
        XCTAssertFalse(b.items().contains { $0.hasPrefix(id) }, "the second deletion (of revision 2) reached B")
    }

    /// A file planted in (or damaged in) this device's container never reaches the remote,
    /// where it would make every other device refuse its syncs.
    func testAPlantedOrDamagedLocalFileIsNotPushed() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let kept = a.add("kept.example", "kim", password: "k")
        a.sync(); b.sync()
        let foreign = SyncDevice("foreign", root: root)
        foreign.harness.initVault()
        let foreignID = foreign.add("evil.example", "eve", password: "x")
        let planted = a.container + "/records/\(foreignID.prefix(2))/\(foreignID)"
        try FileManager.default.createDirectory(
            atPath: a.container + "/records/\(foreignID.prefix(2))", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: foreign.container + "/records/\(foreignID.prefix(2))/\(foreignID)", toPath: planted)
        let refused = a.run(["sync"])
        XCTAssertEqual(refused.code, 65, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(foreignID), refused.stderr)
        try FileManager.default.removeItem(atPath: planted)
        // A tombstone damaged here.
        XCTAssertEqual(a.run(["rm", kept, "--force"]).code, 0)
        a.sync()
        let tombstone = a.container + "/tombstones/\(kept.prefix(2))/\(kept)"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: tombstone))
        bytes[40] ^= 1
        try bytes.write(to: URL(fileURLWithPath: tombstone))
        XCTAssertEqual(a.run(["sync"]).code, 65)
        let verified = a.run(["verify"])
        XCTAssertEqual(verified.code, 65)
        XCTAssertTrue((verified.stdout + verified.stderr).contains("tombstone fails authentication"), verified.stdout + verified.stderr)
        let report = b.sync()
        XCTAssertEqual((report["incoming"] as? [String: Any])?["deleted"] as? Int, 1, "B got the deletion, sealed before the damage")
        XCTAssertFalse(b.items().contains { $0.hasPrefix(foreignID) })
    }

    // MARK: A remote that lies

    func testADeletedRecordPutBackByTheRemoteStaysDeleted() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("old.example", "olga", password: "o1")
        a.sync(); b.sync()
        let shard = String(id.prefix(2))
        let attacker = try attackerClone()
        let oldRecord = try Data(contentsOf: URL(fileURLWithPath: attacker + "/records/\(shard)/\(id)"))
        XCTAssertEqual(a.run(["rm", id, "--force"]).code, 0)
        a.sync()
        // The attacker puts the old file back and drops the tombstone.
        try git(["pull", "-q", "--no-rebase"], in: attacker)
        try FileManager.default.createDirectory(atPath: attacker + "/records/\(shard)", withIntermediateDirectories: true)
        try oldRecord.write(to: URL(fileURLWithPath: attacker + "/records/\(shard)/\(id)"))
        try git(["rm", "-q", "tombstones/\(shard)/\(id)"], in: attacker)
        try git(["add", "-A"], in: attacker)
        try git(["commit", "-q", "-m", "put back"], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        let report = a.sync()
        XCTAssertEqual(report["refusedPutBack"] as? Int, 1)
        XCTAssertFalse(a.items().contains { $0.hasPrefix(id) })
        b.sync()
        XCTAssertFalse(b.items().contains { $0.hasPrefix(id) }, "the tombstone went back up and reached B")
        XCTAssertEqual(a.items(), b.items())
    }

    func testForeignAlteredAndSwappedFilesAreRefusedAndNothingIsMerged() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let first = a.add("one.example", "uno", password: "p1")
        let second = a.add("two.example", "dos", password: "p2")
        a.sync(); b.sync()
        let foreign = SyncDevice("foreign", root: root)
        foreign.harness.initVault()
        let foreignID = foreign.add("evil.example", "eve", password: "x")
        // A deletion, so that an authentic tombstone exists to misuse.
        let doomed = a.add("doomed.example", "dee", password: "d")
        a.sync()
        XCTAssertEqual(a.run(["rm", doomed, "--force"]).code, 0)
        a.sync(); b.sync()
        let gone = a.container + "/tombstones/\(doomed.prefix(2))/\(doomed)"
        let before = b.items()
        let foreignFile = foreign.container + "/records/\(foreignID.prefix(2))/\(foreignID)"

        let attacks: [(String, (String) throws -> Void)] = [
            ("a foreign record", { clone in
                try FileManager.default.createDirectory(atPath: clone + "/records/\(foreignID.prefix(2))", withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: foreignFile, toPath: clone + "/records/\(foreignID.prefix(2))/\(foreignID)")
            }),
            ("a flipped byte", { clone in
                let path = clone + "/records/\(first.prefix(2))/\(first)"
                var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                bytes[bytes.count - 20] ^= 1
                try bytes.write(to: URL(fileURLWithPath: path))
            }),
            ("a swapped record", { clone in
                let one = clone + "/records/\(first.prefix(2))/\(first)", two = clone + "/records/\(second.prefix(2))/\(second)"
                let bytes = try Data(contentsOf: URL(fileURLWithPath: one))
                try Data(contentsOf: URL(fileURLWithPath: two)).write(to: URL(fileURLWithPath: one))
                try bytes.write(to: URL(fileURLWithPath: two))
            }),
            ("another vault's header", { clone in
                try FileManager.default.removeItem(atPath: clone + "/vault.coffer")
                try FileManager.default.copyItem(atPath: foreign.container + "/vault.coffer", toPath: clone + "/vault.coffer")
            }),
            ("a tombstone moved to another record", { clone in
                // An authentic tombstone (of a record deleted here) filed under a live record's id.
                let shard = clone + "/tombstones/\(first.prefix(2))"
                try FileManager.default.createDirectory(atPath: shard, withIntermediateDirectories: true)
                try Data(contentsOf: URL(fileURLWithPath: gone)).write(to: URL(fileURLWithPath: shard + "/\(first)"))
                try FileManager.default.removeItem(atPath: clone + "/records/\(first.prefix(2))/\(first)")
            }),
            ("an oversized record", { clone in
                try Data(count: 2 << 20).write(to: URL(fileURLWithPath: clone + "/records/\(first.prefix(2))/\(first)"))
            }),
            ("a stray file", { clone in try Data("x".utf8).write(to: URL(fileURLWithPath: clone + "/records/notes.txt")) }),
            ("a symbolic link", { clone in
                try FileManager.default.createSymbolicLink(atPath: clone + "/records/\(first.prefix(2))/" + String(repeating: "\(first.prefix(2))", count: 16), withDestinationPath: "/etc/passwd")
            }),
        ]
        for (name, attack) in attacks {
            let clone = try attackerClone()
            try attack(clone)
            try git(["add", "-A"], in: clone)
            try git(["commit", "-q", "-m", name], in: clone)
            try git(["push", "-q", "--force", "origin", "HEAD:main"], in: clone)
            let result = b.run(["sync"])
            XCTAssertEqual(result.code, 65, "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("the remote"), "\(name): \(result.stderr)")
            XCTAssertEqual(b.items(), before, "\(name): nothing merged")
            // Put the remote back as it was for the next attack.
            try git(["push", "-q", "--force", "origin", "HEAD~1:main"], in: clone)
        }
    }

    func testARemoteResetToAnOldCommitIsDetectedAndRepaired() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let id = a.add("reset.example", "rita", password: "r1")
        a.sync()
        let old = try git(["--git-dir", remote, "rev-parse", "main"]).trimmingCharacters(in: .whitespacesAndNewlines)
        a.setPassword(id, "r2")
        let later = a.add("later.example", "lars", password: "l1")
        a.sync()
        let resetter = try attackerClone()
        try git(["push", "-q", "--force", "origin", old + ":main"], in: resetter)
        let report = a.sync()
        XCTAssertEqual(report["remoteHistory"] as? String, "rewound")
        XCTAssertEqual(report["pushed"] as? Bool, true, "the newer state went back up")
        XCTAssertEqual(a.record(id)["password"] as? String, "r2")
        b.sync()
        XCTAssertEqual(b.record(id)["password"] as? String, "r2")
        XCTAssertEqual(b.record(later)["password"] as? String, "l1")

        // A record rolled back on its own, in a new commit: older than this device has seen.
        let attacker = try attackerClone()
        let path = "records/\(id.prefix(2))/\(id)"
        try git(["checkout", "-q", old, "--", path], in: attacker)
        try git(["commit", "-q", "-m", "roll back", "--", path], in: attacker)
        try git(["push", "-q", "origin", "HEAD:main"], in: attacker)
        let rolled = b.sync()
        XCTAssertEqual(rolled["remoteBehind"] as? Int, 1)
        XCTAssertEqual(b.record(id)["password"] as? String, "r2")
        a.sync()
        XCTAssertEqual(a.record(id)["password"] as? String, "r2")

        // A history replaced by one that never held this device's commits: the old tree as a
        // new root commit, force-pushed.
        let oldTree = try git(["--git-dir", remote, "rev-parse", old + "^{tree}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let orphan = try git(["--git-dir", remote, "commit-tree", oldTree, "-m", "rewritten"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try git(["--git-dir", remote, "update-ref", "refs/heads/main", orphan])
        let rewritten = a.sync()
        XCTAssertEqual(rewritten["remoteHistory"] as? String, "rewritten")
        XCTAssertEqual(rewritten["pushed"] as? Bool, true)
        XCTAssertEqual(a.record(id)["password"] as? String, "r2")
        XCTAssertEqual(a.record(later)["password"] as? String, "l1", "a record the old tree lacks stays")
        b.sync()
        XCTAssertEqual(a.items(), b.items())
    }

    // MARK: What git sees

    func testNoServiceOrUserNameReachesTheRepository() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let secrets = ["leakcheck-bank.example", "leakcheck-alice", "leakcheck-mail.example", "leakcheck-bob", "leakcheck-Pa55word"]
        let id = a.add(secrets[0], secrets[1], password: secrets[4])
        _ = b.add(secrets[2], secrets[3], password: secrets[4] + "2")
        XCTAssertEqual(a.run(["edit", id, "--name", "leakcheck-My Bank"]).code, 0)
        a.sync(); b.sync(); a.sync()
        XCTAssertEqual(a.run(["rm", id, "--force"]).code, 0)
        a.sync()
        for gitDirectory in [a.container + "/.git", b.container + "/.git", remote] {
            // Every object, uncompressed, and every other file as it is.
            let objects = try runTool("/usr/bin/git", ["--git-dir", gitDirectory, "cat-file", "--batch-all-objects", "--batch"], environment: ["HOME": root])
            XCTAssertEqual(objects.code, 0)
            var texts = [objects.stdout]
            let enumerator = FileManager.default.enumerator(atPath: gitDirectory)
            while let path = enumerator?.nextObject() as? String {
                if let data = FileManager.default.contents(atPath: gitDirectory + "/" + path) { texts.append(String(decoding: data, as: UTF8.self)) }
            }
            for text in texts {
                XCTAssertFalse(text.contains("leakcheck"), "\(gitDirectory) holds a name or password")
            }
            let log = try git(["--git-dir", gitDirectory, "log", "--all", "--format=%an %ae %s"])
            for line in log.split(separator: "\n") { XCTAssertTrue(line.hasPrefix("coffer coffer@localhost coffer: "), "\(line)") }
            let branches = try git(["--git-dir", gitDirectory, "for-each-ref", "--format=%(refname)"])
            for ref in branches.split(separator: "\n") {
                XCTAssertTrue(["refs/heads/main", "refs/remotes/origin/main", "refs/coffer/synced"].contains(String(ref)), "\(ref)")
            }
        }
    }

    func testAutomaticSyncAfterEachChange() {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        a.harness.environment["COFFER_AUTOSYNC"] = "1"
        let id = a.add("auto.example", "otto", password: "o1")  // pushed by the add itself
        a.setPassword(id, "o2")
        b.sync()
        XCTAssertEqual(b.record(id)["password"] as? String, "o2")
        // An unreachable remote: the change stays, with a warning.
        try? FileManager.default.moveItem(atPath: remote, toPath: remote + ".away")
        let offline = a.run(["add", "offline.example", "olaf"], stdin: "x\n")
        XCTAssertEqual(offline.code, 0)
        XCTAssertTrue(offline.stderr.contains("automatic sync failed"), offline.stderr)
        try? FileManager.default.moveItem(atPath: remote + ".away", toPath: remote)
        XCTAssertEqual(a.sync()["outgoing"].flatMap { ($0 as? [String: Any])?["added"] as? Int }, 1)
    }

    /// The same through a network remote: `git daemon` on 127.0.0.1 (git's own transport).
    func testSyncThroughAGitServerOnLocalhost() throws {
        let port = 20000 + Int(getpid() % 20000)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        daemon.arguments = ["daemon", "--reuseaddr", "--listen=127.0.0.1", "--port=\(port)", "--base-path=\(root)", "--export-all",
                            "--enable=receive-pack", root]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer { daemon.terminate(); daemon.waitUntilExit() }
        let url = "git://127.0.0.1:\(port)/remote.git"
        var reachable = false
        for _ in 0..<50 where !reachable {
            reachable = (try? runTool("/usr/bin/git", ["ls-remote", url], environment: ["HOME": root]))?.code == 0
            if !reachable { usleep(100_000) }
        }
        guard reachable else { throw XCTSkip("git daemon did not start on port \(port)") }
        let a = SyncDevice("A", root: root), b = SyncDevice("B", root: root)
        a.harness.initVault()
        let id = a.add("net.example", "nat", password: "n1")
        XCTAssertEqual(a.run(["sync", "remote", url]).code, 0)
        a.sync()
        let cloned = b.harness.run(["clone", url, "--password-stdin", "--container", b.container], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        b.setPassword(id, "n2")
        b.sync(); a.sync()
        XCTAssertEqual(a.record(id)["password"] as? String, "n2")
        XCTAssertEqual(a.items(), b.items())
    }

    /// A remote that refuses for good (here a server hook that declines every push) is reported
    /// with git's reason at once, not retried as if another device had pushed.
    func testARemoteThatRefusesThePushSaysWhy() throws {
        let hook = remote + "/hooks/pre-receive"
        try Data("#!/bin/sh\nexit 1\n".utf8).write(to: URL(fileURLWithPath: hook))
        chmod(hook, 0o755)
        let a = SyncDevice("A", root: root)
        a.harness.initVault()
        XCTAssertEqual(a.run(["sync", "remote", remote]).code, 0)
        let started = Date()
        let result = a.run(["sync"])
        XCTAssertEqual(result.code, 69, result.stderr)
        XCTAssertTrue(result.stderr.contains("hook declined"), result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "no ten rounds of retries")
    }

    func testCloneRefusesAWrongPasswordAndLeavesNothing() {
        _ = devices([])
        let device = SyncDevice("wrong", root: root)
        let result = device.harness.run(["clone", remote, "--password-stdin", "--container", device.container], stdin: "not it\n", container: false)
        XCTAssertEqual(result.code, 77, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: device.container))
    }

    func testSyncStatusAndUsage() {
        let devices = devices()
        let a = devices[0]
        _ = a.add("status.example", "stu", password: "s")
        let status = a.harness.run(["sync", "status", "--json"])
        XCTAssertEqual(status.code, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("\"uncommittedFiles\":1"), status.stdout)
        let unsynced = SyncDevice("plain", root: root)
        unsynced.harness.initVault()
        XCTAssertEqual(unsynced.run(["sync"]).code, 78, "not configured")
        XCTAssertEqual(unsynced.run(["sync", "remote", "https://user:secret@example.net/v.git"]).code, 64)
    }
}
