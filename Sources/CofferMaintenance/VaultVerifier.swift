import CofferProvider
import FoundationEssentials

/// What `verify` found: every problem with the file it concerns.
public struct VerificationReport: Sendable {
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        public let file: String
        public let message: String
        /// The container or something in it is not private to this user (SPEC.md §3.5: exit
        /// 78, as every other command reports it); otherwise the problem is damage (65).
        public let isUnsafeOwnership: Bool
        public var description: String { "\(file): \(message)" }
    }

    /// Whether any problem is one of ownership or access (78) rather than damage (65).
    public var hasUnsafeOwnership: Bool { problems.contains(where: \.isUnsafeOwnership) }

    public internal(set) var problems: [Problem] = []
    public internal(set) var recordCount = 0
    /// The index generation, when the index could be read.
    public internal(set) var generation: UInt64?
    /// Whether the index was checked (needs the vault unlocked or the store enabled here).
    public internal(set) var checkedIndex = false
    /// Whether every record was decrypted (needs the vault unlocked).
    public internal(set) var checkedContents = false
    /// For a backup older than what this device has seen: the generation it has seen. Age is
    /// information, not tampering (SPEC.md §11); in a live vault the same finding is a problem.
    public internal(set) var olderThanSeen: UInt64?

    public var isClean: Bool { problems.isEmpty }
    /// Directories the walk was refused (reported as problems themselves).
    var refusedDirectories: Set<String> = []

    mutating func add(_ file: String, _ message: String, unsafeOwnership: Bool = false) {
        problems.append(Problem(file: file, message: message, isUnsafeOwnership: unsafeOwnership))
    }

    /// A problem from an error, its kind from the error's type.
    mutating func add(_ file: String, _ error: Error) {
        let storage: StorageError? = switch error {
        case let storage as StorageError: storage
        case VaultError.storage(let storage): storage
        default: nil
        }
        add(file, "\(error)", unsafeOwnership: storage?.isUnsafeOwnership == true)
    }
}

/// Checks a vault as deeply as the available keys allow (SPEC.md §11): without any key, the
/// structure, modes and sizes of every file; with the index key, that the index and the record
/// files agree (revision, ciphertext hash, generation); with the vault key, every record.
struct VaultVerifier {
    let vault: Vault
    /// Whether the container is a backup, whose generation may be older than the device's.
    var isBackup = false
    /// The container a backup is of: its generation mark is the one a backup is compared with.
    var liveContainer: GroupContainer?
    var container: GroupContainer { vault.container }
    var fileSystem: FileSystem { vault.fileSystem }

    func run() -> VerificationReport {
        var report = VerificationReport()
        let opened: OpenContainer
        do {
            opened = try vault.openContainer()
        } catch {
            report.add(container.path, error)
            return report
        }
        let index = try? vault.identityIndex(opened)
        if let index {
            do {
                // A crashed writer's journal is finished first, as any access would.
                try vault.fileLock(opened).withLock(.exclusive) { try vault.recover(index) }
            } catch {
                report.add(index.journalPath, "\(error)")
            }
        }
        let (files, attachments) = checkLayout(opened, readingEnvelopes: index == nil, &report)
        report.recordCount = files.count
        // A team's key file: the chain, the slots and the keys, as any reader judges them.
        if vault.isUnlocked, (try? fileSystem.status(GroupContainer.teamKeysName, in: opened.root)) != nil {
            do { _ = try vault.teamMembership() } catch { report.add(opened.root.path(of: GroupContainer.teamKeysName), "\(error)") }
        }
        guard let index else { return report }
        do {
            try vault.fileLock(opened).withLock(.shared) { try checkIndex(index, files: files, attachments: attachments, into: &report) }
        } catch {
            report.add(index.manifestPath, "\(error)")
            // The records were left for the index pass to read: read them here instead.
            for id in files {
                do { try checkEnvelope(vault.readRecordFile(id, in: opened)) } catch { report.add(container.recordPath(id), "\(error)") }
            }
        }
        return report
    }

    // MARK: Without keys: the whole tree, never through a link (SPEC.md §3.4)

    /// Walks the container: every entry of the root, `records/`, `index/` and `tmp/` must be what
    /// belongs at its place (a regular file or a private directory); links, FIFOs, devices and
    /// misplaced directories are named. Returns every well-formed record file and attachment file.
    private func checkLayout(
        _ opened: OpenContainer, readingEnvelopes: Bool, _ report: inout VerificationReport
    ) -> (records: [RecordID], attachments: [AttachmentID: String]) {
        let root = opened.root
        let expected: [(String, FileStatus.Kind)] = [
            (GroupContainer.headerName, .regular), (GroupContainer.lockName, .regular), (GroupContainer.recordsName, .directory),
            (GroupContainer.indexName, .directory), (GroupContainer.temporaryName, .directory),
            // A synced container (SPEC.md §15): git's own directory (not walked), the header
            // seal and the tombstones of deleted records.
            (GroupContainer.gitName, .directory), (GroupContainer.headerSealName, .regular), (GroupContainer.tombstonesName, .directory),
            // A team's (SPEC.md §16.3): judged below when the team is unlocked.
            (GroupContainer.teamKeysName, .regular),
            // Attachments (SPEC.md §6.7), and those in passage (as tmp/: never read).
            (GroupContainer.attachmentsName, .directory), (GroupContainer.incomingName, .directory),
        ]
        for name in (try? fileSystem.contents(of: root)) ?? [] {
            guard let kind = expected.first(where: { $0.0 == name })?.1 else {
                report.add(root.path(of: name), "unexpected entry in the container (\(describe(name, in: root)))")
                continue
            }
            checkEntry(name, in: root, kind: kind, &report)
        }
        if (try? fileSystem.status(GroupContainer.headerName, in: root)) == nil { report.add(root.path(of: GroupContainer.headerName), "missing") }
        for name in [GroupContainer.temporaryName, GroupContainer.incomingName] {
            guard let temporary = subdirectory(name, in: root, &report) else { continue }
            // A regular file there is a write in flight in another process, or the garbage of a
            // killed one that the next write removes (SPEC.md §3.4): never read, never a problem.
            // Anything else (a link, a FIFO, a directory) was put there by someone else.
            for name in (try? fileSystem.contents(of: temporary)) ?? [] {
                guard let status = try? fileSystem.status(name, in: temporary), status.kind != .regular else { continue }
                report.add(temporary.path(of: name), "unexpected entry in \(FileSystem.lastComponent(of: temporary.path))/ (\(describe(name, in: temporary)))")
            }
        }
        if let index = subdirectory(GroupContainer.indexName, in: root, &report) {
            let kinds: [(String, FileStatus.Kind)] = [(IdentityIndex.manifestName, .regular), (IdentityIndex.journalName, .regular), ("shards", .directory)]
            for name in (try? fileSystem.contents(of: index)) ?? [] {
                guard let kind = kinds.first(where: { $0.0 == name })?.1 else {
                    report.add(index.path(of: name), "unexpected entry in index/ (\(describe(name, in: index)))")
                    continue
                }
                checkEntry(name, in: index, kind: kind, &report)
            }
            if let shards = subdirectory("shards", in: index, &report) {
                for name in (try? fileSystem.contents(of: shards)) ?? [] { checkEntry(name, in: shards, kind: .regular, &report) }
            }
        }
        checkTombstones(in: root, &report)
        let attachments = attachmentFiles(in: root, &report)
        return (recordFiles(in: root, readingEnvelopes: readingEnvelopes, &report), attachments)
    }

    /// `attachments/<xx>/<id>`: named as records are, regular files; read when a record names them.
    private func attachmentFiles(in root: Directory, _ report: inout VerificationReport) -> [AttachmentID: String] {
        var files: [AttachmentID: String] = [:]
        for (name, directory) in shardedFiles(GroupContainer.attachmentsName, of: "an attachment", in: root, &report) {
            if let id = try? AttachmentID(hex: name) { files[id] = directory.path(of: name) }
        }
        return files
    }

    /// The regular files of a sharded directory (`records/`, `tombstones/`, `attachments/`):
    /// each `<xx>/<id>`, `id` 32 lowercase hex digits in the shard of its first byte. Anything
    /// else there — another name, a link, a FIFO, a directory — is reported and left out.
    private func shardedFiles(_ name: String, of what: String, in root: Directory, _ report: inout VerificationReport) -> [(String, Directory)] {
        var files: [(String, Directory)] = []
        guard let parent = subdirectory(name, in: root, &report) else { return files }
        for shard in (try? fileSystem.contents(of: parent)) ?? [] {
            guard shard.utf8.count == 2, Hex.decode(shard) != nil else {
                report.add(parent.path(of: shard), "unexpected entry in \(name)/ (\(describe(shard, in: parent)))")
                continue
            }
            guard checkEntry(shard, in: parent, kind: .directory, &report), let directory = subdirectory(shard, in: parent, &report) else { continue }
            for file in (try? fileSystem.contents(of: directory)) ?? [] {
                guard (try? RecordID(hex: file)) != nil, file.hasPrefix(shard) else {
                    report.add(directory.path(of: file), "not \(what) file name (32 lowercase hex digits in the shard of its first byte; \(describe(file, in: directory)))")
                    continue
                }
                if checkEntry(file, in: directory, kind: .regular, &report) { files.append((file, directory)) }
            }
        }
        return files
    }

    /// `tombstones/<xx>/<id>`: named like records, each exactly a tombstone's size and shape,
    /// and authentic under its own id when the vault is unlocked.
    private func checkTombstones(in root: Directory, _ report: inout VerificationReport) {
        let keys = try? vault.keys()
        for (name, directory) in shardedFiles(GroupContainer.tombstonesName, of: "a tombstone", in: root, &report) {
            do {
                let bytes = try fileSystem.readFile(name, in: directory, limit: Tombstone.fileLength)
                if let keys, let id = try? RecordID(hex: name) {
                    _ = try keys.openingWithRecordKey { try Tombstone.open(bytes, id: id, vaultID: vault.vaultID, key: $0) }
                } else {
                    _ = try SealedEnvelope.decode(bytes, as: .tombstone, validLength: { $0 == Tombstone.fileLength })
                }
            } catch CryptoError.authenticationFailed {
                report.add(directory.path(of: name), "tombstone fails authentication (altered, moved or from another vault)")
            } catch {
                report.add(directory.path(of: name), "\(error)")
            }
        }
    }

    /// Every well-named record file, checked for type and mode. Its size and envelope are
    /// checked where it is read: here when no index can be read (nothing else will read it),
    /// otherwise once, with everything else, by `checkRecord` — reading a million files twice
    /// was half of a verify.
    private func recordFiles(in root: Directory, readingEnvelopes: Bool, _ report: inout VerificationReport) -> [RecordID] {
        var files: [RecordID] = []
        for (name, directory) in shardedFiles(GroupContainer.recordsName, of: "a record", in: root, &report) {
            do {
                if readingEnvelopes { try checkEnvelope(fileSystem.readFile(name, in: directory, limit: RecordEnvelope.maximumFileLength)) }
                if let id = try? RecordID(hex: name) { files.append(id) }
            } catch {
                report.add(directory.path(of: name), "\(error)")
            }
        }
        return files.sorted()
    }

    func checkEnvelope(_ bytes: [UInt8]) throws { _ = try RecordEnvelope.decode(bytes) }

    /// Opens a directory of the container for the walk, reporting why it cannot be (a link, a
    /// file in its place, another owner, group or other access); `nil` when absent or refused.
    private func subdirectory(_ name: String, in parent: Directory, _ report: inout VerificationReport) -> Directory? {
        do {
            return try fileSystem.directoryIfPresent(name, in: parent)
        } catch {
            report.add(parent.path(of: name), error)
            report.refusedDirectories.insert(name)
            return nil
        }
    }

    /// Whether `name` in `directory` is of `kind` (reported otherwise), and private.
    @discardableResult
    private func checkEntry(_ name: String, in directory: Directory, kind: FileStatus.Kind, _ report: inout VerificationReport) -> Bool {
        let path = directory.path(of: name)
        guard let info = try? fileSystem.status(name, in: directory) else {
            report.add(path, "missing")
            return false
        }
        guard info.kind == kind else {
            report.add(path, "is \(info.kind) where \(kind) belongs; never followed or read")
            return false
        }
        if kind == .regular, info.permissions & 0o077 != 0 {
            report.add(path, "mode \(String(info.permissions & 0o777, radix: 8)) is open to group or others", unsafeOwnership: true)
        }
        return true
    }

    /// What an entry is, for a message.
    private func describe(_ name: String, in directory: Directory) -> String {
        guard let info = try? fileSystem.status(name, in: directory) else { return "gone" }
        return info.kind.description
    }

}

extension Vault {
    /// Checks the vault as deeply as the available keys allow. Never changes anything except
    /// finishing a crashed writer's journal, as every access does.
    /// - Parameters:
    ///   - asBackup: the container is a backup (or a restore's staging copy): a generation
    ///     older than this device has seen is reported in `olderThanSeen`, not as a problem.
    ///     Everything else — authentication, consistency — is checked as for a live vault.
    ///   - live: the container the backup is of, whose generation mark (SPEC.md §7.7) it is
    ///     compared with; the backup's own container when `nil`.
    public func verify(asBackup: Bool = false, of live: GroupContainer? = nil) -> VerificationReport {
        var verifier = VaultVerifier(vault: self, isBackup: asBackup)
        verifier.liveContainer = live
        return verifier.run()
    }
}
