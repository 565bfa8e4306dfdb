import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// Someone who can write to the container (SPEC.md §2) plants a link, a FIFO or an entry of the
/// wrong type at every position of the container and of the device state. Every command either
/// works without following it or refuses it (exit 65), no secret is released through it, `verify`
/// names it, and a canary directory outside the container is byte-for-byte unchanged afterwards
/// (the original bug: a password-less `coffer list` emptied the directory `tmp/` linked to).
final class PlantedEntryTests: XCTestCase {
    enum Position: String, CaseIterable {
        case tmp, records, recordShard, record, index, shards, shard, manifest, journal, header, lock, deviceState
        var isDirectory: Bool { [.tmp, .records, .recordShard, .index, .shards, .deviceState].contains(self) }
    }

    enum Plant: String, CaseIterable {
        case relativeLinkInside, relativeLinkOutside, absoluteLinkOutside, fifo, wrongType
    }

    /// A vault with two records in different shards, its device state, and what the cases need.
    struct Template {
        let base: String
        let alice: String
        let bob: String
        let vaultID: String
        let aliceLedgerShard: String
        let backup: String
    }

    static let template: Template = makeTemplate()
    let master = CLIHarness.master

    static func makeTemplate() -> Template {
        let base = ScratchDirectories.make(prefix: "coffer-planted-template")
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: base + "/vault")
            try? FileManager.default.removeItem(atPath: base + "/state")
            let cli = CLIHarness(base: base)
            cli.initVault()
            let alice = cli.add("github.com", "alice", password: "AlicePassword")
            let bob = cli.add("example.com", "bob", password: "BobPassword")
            guard alice.prefix(2) != bob.prefix(2) else { continue }  // the cases need two shards
            let vaultID = (try? FileManager.default.contentsOfDirectory(atPath: base + "/state/coffer/vaults"))?.first ?? ""
            let backup = base + "/template.tar"
            precondition(cli.run(["backup", backup]).code == 0)
            return Template(base: base, alice: alice, bob: bob, vaultID: vaultID, aliceLedgerShard: ledgerShard(of: alice, base: base),
                            backup: backup)
        }
        fatalError("could not make two records in different shards")
    }

    /// The shard file holding alice's ledger entry: the one her record read needs.
    static func ledgerShard(of id: String, base: String) -> String {
        let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: base + "/state/coffer")
        guard let vault = try? Vault.open(GroupContainer(path: base + "/vault"), configuration: configuration),
              (try? vault.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))) != nil,
              let path = try? vault.ledgerShardPath(of: RecordID(hex: id))
        else { fatalError("no ledger shard") }
        return String(path.dropFirst(base.count + "/vault/".count))
    }

    /// One case: a fresh copy of the template, the plant, the canary.
    final class Case {
        let root: String
        let cli: CLIHarness
        let canary: String
        let position: Position
        let plant: Plant
        let template: Template

        init(_ position: Position, _ plant: Plant, template: Template) throws {
            root = ScratchDirectories.make(prefix: "coffer-planted")
            self.position = position
            self.plant = plant
            self.template = template
            for name in ["vault", "state"] {
                try Self.copyTree(template.base + "/" + name, to: root + "/" + name)
            }
            cli = CLIHarness(base: root)
            canary = root + "/canary"
            try FileManager.default.createDirectory(atPath: canary, withIntermediateDirectories: false)
            try Data("precious".utf8).write(to: URL(fileURLWithPath: canary + "/precious.txt"))
            try plantEntry()
        }

        /// Where the position is, relative to `root`.
        var relative: String {
            switch position {
            case .tmp: "vault/tmp"
            case .records: "vault/records"
            case .recordShard: "vault/records/" + template.alice.prefix(2)
            case .record: "vault/records/" + template.alice.prefix(2) + "/" + template.alice
            case .index: "vault/index"
            case .shards: "vault/index/shards"
            case .shard: "vault/" + template.aliceLedgerShard
            case .manifest: "vault/index/manifest"
            case .journal: "vault/index/journal"
            case .header: "vault/vault.coffer"
            case .lock: "vault/lock"
            case .deviceState: "state/coffer/vaults/" + template.vaultID
            }
        }

        var path: String { root + "/" + relative }

        private func plantEntry() throws {
            let manager = FileManager.default
            let exists = manager.fileExists(atPath: path)
            let depth = relative.split(separator: "/").count - 1
            let name = position.rawValue
            switch plant {
            case .relativeLinkInside, .relativeLinkOutside, .absoluteLinkOutside:
                // The link points at what was there, so following it would "work".
                let inside = plant == .relativeLinkInside
                let target = inside ? root + "/" + relative.split(separator: "/")[0] + "/stash-" + name : canary + "/" + name
                if exists { try manager.moveItem(atPath: path, toPath: target) } else { try Data("junk".utf8).write(to: URL(fileURLWithPath: target)) }
                let text = plant == .absoluteLinkOutside ? target
                    : String(repeating: "../", count: depth - (inside ? 1 : 0)) + (inside ? "stash-" + name : "canary/" + name)
                XCTAssertEqual(symlink(text, path), 0, "\(position) \(plant)")
            case .fifo:
                if exists { try manager.removeItem(atPath: path) }
                XCTAssertEqual(mkfifo(path, 0o600), 0)
            case .wrongType:
                if exists { try manager.removeItem(atPath: path) }
                if position.isDirectory {
                    try Data("not a directory".utf8).write(to: URL(fileURLWithPath: path))
                } else {
                    try manager.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
                }
            }
        }

        /// Every entry under the canary: name, kind and bytes.
        func canarySnapshot() -> [String] {
            var entries: [String] = []
            let enumerator = FileManager.default.enumerator(atPath: canary)
            while let name = enumerator?.nextObject() as? String {
                var info = stat()
                lstat(canary + "/" + name, &info)
                let bytes = info.st_mode & S_IFMT == S_IFREG ? (FileManager.default.contents(atPath: canary + "/" + name)?.base64EncodedString() ?? "?") : ""
                entries.append("\(name) \(info.st_mode & S_IFMT) \(bytes)")
            }
            return entries.sorted()
        }

        /// A private copy (directories 0700, files 0600), in process: a `cp` per case was most
        /// of this test's time.
        static func copyTree(_ source: String, to destination: String) throws {
            let manager = FileManager.default
            try manager.createDirectory(atPath: destination, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            for name in try manager.contentsOfDirectory(atPath: source) {
                var info = stat()
                lstat(source + "/" + name, &info)
                if info.st_mode & S_IFMT == S_IFDIR {
                    try copyTree(source + "/" + name, to: destination + "/" + name)
                } else {
                    _ = manager.createFile(atPath: destination + "/" + name, contents: manager.contents(atPath: source + "/" + name),
                                       attributes: [.posixPermissions: 0o600])
                }
            }
        }
    }

    /// The commands, each with what it needs; `git get` prints a password or nothing.
    func commands(_ c: Case) -> [(String, () -> RunResult)] {
        let t = c.template
        let csv = c.root + "/import.csv"
        try? Data("name,url,username,password,note\nnew,https://new.example.org,nina,NinaPassword,\n".utf8).write(to: URL(fileURLWithPath: csv))
        let passwordFile = c.root + "/master"
        try? Data((master + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        let pw = master + "\n"
        return [
            ("list", { c.cli.run(["list", "--password-stdin"], stdin: pw) }),
            ("fill", { c.cli.run(["fill", "github.com", "--password-stdin"], stdin: pw) }),
            ("show", { c.cli.run(["show", t.alice, "--password-stdin"], stdin: pw) }),
            ("add", { c.cli.run(["add", "new.example.net", "carl", "--password-stdin"], stdin: pw + "CarlPassword\n") }),
            ("edit", { c.cli.run(["edit", t.alice, "--user", "al", "--password-stdin"], stdin: pw) }),
            ("rm", { c.cli.run(["rm", t.bob, "--force", "--password-stdin"], stdin: pw) }),
            ("import", { c.cli.run(["import", csv, "--password-stdin"], stdin: pw) }),
            ("verify", { c.cli.run(["verify", "--password-stdin"], stdin: pw) }),
            ("backup", { c.cli.run(["backup", c.root + "/out.tar"]) }),
            ("passwd", { c.cli.run(["passwd", "--password-stdin"], stdin: pw + "new master\nnew master\n") }),
            ("git get", { c.cli.runGitHelper(["--password-file", passwordFile, "get"], stdin: "protocol=https\nhost=github.com\n\n") }),
            ("docker get", { c.cli.runDockerHelper(["get"], stdin: "github.com\n") }),
            ("restore", { c.cli.run(["restore", t.backup, "--force"]) }),
        ]
    }

    static let commandNames = ["list", "fill", "show", "add", "edit", "rm", "import", "verify", "backup", "passwd", "git get", "docker get", "restore"]

    /// Commands that need the planted entry, and so must refuse it (never work through it).
    func mustRefuse(_ position: Position, _ command: String) -> Bool {
        let readers = ["list", "fill", "show", "verify", "backup"], writers = ["add", "edit", "rm", "import"]
        switch position {
        case .header: return !["restore", "git get", "docker get"].contains(command)
        case .lock: return (readers + writers + ["passwd"]).contains(command)
        case .tmp: return (writers + ["passwd", "verify"]).contains(command)
        case .records: return (["fill", "show", "verify", "backup"] + writers).contains(command)
        case .recordShard, .record, .shard: return ["fill", "show", "edit", "verify", "backup"].contains(command)
        case .index, .manifest, .journal: return (["list", "fill", "show", "verify", "backup"] + writers).contains(command)
        case .shards: return (["fill", "show", "verify", "backup"] + writers).contains(command)
        case .deviceState: return (["list", "fill", "show"] + writers).contains(command)
        }
    }

    func testEveryPlantAtEveryPositionIsRefusedOrHarmless() throws {
        var failures = 0
        for position in Position.allCases {
            for plant in Plant.allCases {
                for name in Self.commandNames {
                    let planted = try Case(position, plant, template: Self.template)  // a fresh copy per command
                    let before = planted.canarySnapshot()
                    let command = commands(planted).first { $0.0 == name }!.1
                    let result = command()
                    let label = "\(position) \(plant) \(name)"
                    let output = result.stdout + result.stderr
                    XCTAssertEqual(planted.canarySnapshot(), before, "\(label): the canary outside the container changed")
                    // docker's protocol answers 1 to every failure.
                    XCTAssertTrue([0, 64, 65, 66, 75].contains(result.code) || (name == "docker get" && result.code == 1),
                                  "\(label): exit \(result.code): \(result.stderr)")
                    if mustRefuse(position, name) {
                        if result.code == 0 { failures += 1 }
                        XCTAssertNotEqual(result.code, 0, "\(label): worked through the planted entry: \(result.stdout)")
                        XCTAssertFalse(output.contains("AlicePassword"), "\(label): released a password")
                    }
                    if name == "git get", position != .tmp {
                        XCTAssertFalse(result.stdout.contains("AlicePassword"), "\(label): git got a password through it")
                    }
                    if name == "verify", position != .deviceState {
                        XCTAssertEqual(result.code, 65, label)
                        XCTAssertTrue(output.contains(planted.path), "\(label): verify did not name \(planted.relative): \(output)")
                    }
                    if result.code == 65 {
                        XCTAssertTrue(result.stderr.contains("coffer: error:") || name.hasPrefix("verify"), "\(label): \(result.stderr)")
                    }
                }
            }
        }
        XCTAssertEqual(failures, 0)
    }

    /// The fourth repro: every rejected file is exit 65, an open container 78 (they were 1).
    func testRejectedFilesExit65AndAContainerOpenToOthers78() throws {
        let pw = master + "\n"
        let longHeader = try Case(.tmp, .wrongType, template: Self.template)
        try FileManager.default.removeItem(atPath: longHeader.path)
        let header = longHeader.root + "/vault/vault.coffer"
        try (FileManager.default.contents(atPath: header)! + Data([0])).write(to: URL(fileURLWithPath: header))
        for command in [["show", Self.template.alice], ["fill", "github.com"], ["list"]] {
            XCTAssertEqual(longHeader.cli.run(command + ["--password-stdin"], stdin: pw).code, 65, "145-byte header: \(command)")
        }
        let huge = try Case(.tmp, .fifo, template: Self.template)
        let record = huge.root + "/vault/records/" + Self.template.alice.prefix(2) + "/" + Self.template.alice
        XCTAssertEqual(truncate(record, off_t(RecordEnvelope.maximumFileLength + 1)), 0)
        XCTAssertEqual(huge.cli.run(["show", Self.template.alice, "--password-stdin"], stdin: pw).code, 65, "an oversized record")
        for mode: mode_t in [0o750, 0o707] {
            let open = try Case(.tmp, .fifo, template: Self.template)
            chmod(open.root + "/vault", mode)
            for command in [["show", Self.template.alice], ["fill", "github.com"], ["list"]] {
                let result = open.cli.run(command + ["--password-stdin"], stdin: pw)
                XCTAssertEqual(result.code, 78, "mode \(String(mode, radix: 8)): \(command): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("chmod"), result.stderr)
            }
        }
    }

    /// A backup directory is walked as a container is: a planted link in it stops the restore
    /// (and `verify` of it) with nothing read through it or written.
    func testALinkInABackupDirectoryIsRefused() throws {
        let planted = try Case(.recordShard, .absoluteLinkOutside, template: Self.template)
        let before = planted.canarySnapshot()
        let target = CLIHarness()
        let restore = target.run(["restore", planted.root + "/vault"])
        XCTAssertEqual(restore.code, 65, restore.stderr)
        XCTAssertTrue(restore.stderr.contains("symbolic link"), restore.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.container), "nothing restored")
        XCTAssertEqual(planted.canarySnapshot(), before)
    }

    /// The first repro, spelled out: `tmp -> ../victim` and a password-less `list`.
    func testALinkedTmpNeverEmptiesItsTarget() throws {
        let planted = try Case(.tmp, .relativeLinkOutside, template: Self.template)
        try Data("stale".utf8).write(to: URL(fileURLWithPath: planted.canary + "/tmp/leftover.tmp"))
        let before = planted.canarySnapshot()
        let list = planted.cli.run(["list"])
        XCTAssertEqual(list.code, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("alice"))
        XCTAssertEqual(planted.canarySnapshot(), before)
        let verify = planted.cli.run(["verify"])
        XCTAssertEqual(verify.code, 65)
        XCTAssertTrue(verify.stdout.contains(planted.path + ": is a symbolic link"), verify.stdout)
    }
}

extension Vault {
    /// The path of the ledger shard that holds record `id` (for tests that plant there).
    func ledgerShardPath(of id: RecordID) throws -> String {
        let index = try identityIndex()
        let manifest = try index.readManifest()
        guard let shard = manifest.shards[IndexManifest.ledgerSlot(of: id)] else { throw VaultError.recordNotFound(id) }
        return index.shardPath(shard)
    }
}

