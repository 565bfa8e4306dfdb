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
        let (files, attachments) = checkLayout(opened, &report)
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
        }
        return report
    }

    // MARK: Without keys: the whole tree, never through a link (SPEC.md §3.4)

    /// Walks the container: every entry of the root, `records/`, `index/` and `tmp/` must be what
    /// belongs at its place (a regular file or a private directory); links, FIFOs, devices and
    /// misplaced directories are named. Returns every well-formed record file and attachment file.
    private func checkLayout(
        _ opened: OpenContainer, _ report: inout VerificationReport
    ) -> (records: [RecordID: String], attachments: [AttachmentID: String]) {
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
        return (recordFiles(in: root, &report), attachments)
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

    /// Every well-named record file, checked for type, mode, size and envelope structure.
    private func recordFiles(in root: Directory, _ report: inout VerificationReport) -> [RecordID: String] {
        var files: [RecordID: String] = [:]
        for (name, directory) in shardedFiles(GroupContainer.recordsName, of: "a record", in: root, &report) {
            do {
                _ = try RecordEnvelope.decode(fileSystem.readFile(name, in: directory, limit: RecordEnvelope.maximumFileLength))
                if let id = try? RecordID(hex: name) { files[id] = directory.path(of: name) }
            } catch {
                report.add(directory.path(of: name), "\(error)")
            }
        }
        return files
    }

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

    // MARK: With the index key

    private func checkIndex(
        _ index: IdentityIndex, files: [RecordID: String], attachments attachmentFiles: [AttachmentID: String], into report: inout VerificationReport
    ) throws {
        let manifest = try index.readManifest()
        report.generation = manifest.generation
        report.checkedIndex = true
        let marks = liveContainer.map {
            DeviceState(root: vault.configuration.stateDirectory, vaultID: vault.vaultID, container: $0.path, fileSystem: vault.fileSystem)
        } ?? vault.deviceState
        let highest = marks.highestGeneration()
        if manifest.generation < highest {
            if isBackup {
                report.olderThanSeen = highest
            } else {
                report.add(index.manifestPath, "generation \(manifest.generation), but this device has seen \(highest): the vault was rolled back")
            }
        }
        let live = Set(manifest.shards.compactMap { $0?.hex })
        let shards = try? index.opened.shards()
        for name in shards.flatMap({ try? fileSystem.contents(of: $0) }) ?? [] where !live.contains(name) {
            report.add(index.shardsDirectory + "/" + name, "shard not referenced by the manifest")
        }
        var ledger: [RecordID: LedgerEntry] = [:]
        var entries: [RecordID: [BucketEntry]] = [:]
        for slot in 0..<IndexManifest.slotCount where manifest.shards[slot] != nil {
            do {
                if slot < IndexManifest.identitySlots {
                    for entry in try index.entries(inSlot: slot, of: manifest, shards: shards) {
                        entries[entry.recordID, default: []].append(entry)
                        if index.slot(for: entry, layout: manifest.layout) != slot {
                            report.add(index.shardPath(manifest.shards[slot]!), "entry of \(entry.recordID) filed in the wrong bucket")
                        }
                    }
                } else {
                    for entry in try index.ledger(inSlot: slot, of: manifest, shards: shards) { ledger[entry.recordID] = entry }
                }
            } catch {
                report.add(index.shardPath(manifest.shards[slot]!), "\(error)")
            }
        }
        // A records/ the walk was refused (another owner, open to others) says nothing of what
        // is missing: that refusal is the problem reported.
        for (id, entry) in ledger where files[id] == nil && !report.refusedDirectories.contains(GroupContainer.recordsName) {
            report.add(container.recordPath(id), "missing: the index lists revision \(entry.revision) (deleted outside Coffer)")
        }
        for id in entries.keys where ledger[id] == nil {
            report.add(container.recordPath(id), "the identity store names a record the ledger does not know")
        }
        let keys = try? vault.keys()
        report.checkedContents = keys != nil
        let work = files.sorted { $0.key < $1.key }
        // Hashing and decrypting 100,000 files is the slow part: all cores share it.
        let results = try concurrentMap(work.count) { position in
            let (id, path) = work[position]
            var attachments: [AttachmentID] = []
            let message = checkRecord(
                id, path: path, ledger: ledger[id], entries: entries[id] ?? [], layout: manifest.layout, keys: keys, in: index.opened,
                attachments: &attachments)
            return (message, attachments)
        }
        for ((_, path), (message, _)) in zip(work, results) {
            if let message { report.add(path, message) }
        }
        // Every attachment file is some record's (a crash leaves none behind, SPEC.md §6.7).
        let named = Set(results.flatMap(\.1))
        if keys != nil, report.problems.allSatisfy({ !$0.file.hasPrefix(container.recordsDirectory) }) {
            for (id, path) in attachmentFiles where !named.contains(id) {
                report.add(path, "no item names this attachment (planted, or left by a program other than Coffer)")
            }
        }
    }

    /// One record against its ledger entry and index entries; `nil` when it is sound.
    private func checkRecord(
        _ id: RecordID, path: String, ledger: LedgerEntry?, entries: [BucketEntry], layout: IndexLayout, keys: VaultKeys?,
        in opened: OpenContainer, attachments: inout [AttachmentID]
    ) -> String? {
        guard let ledger else { return "not in the index (added outside Coffer, or a deleted record put back)" }
        guard let bytes = try? vault.readRecordFile(id, in: opened),
              let hash = try? ciphertextHash(bytes)
        else { return "unreadable" }
        guard hash == ledger.ciphertextHash else { return "does not match the index (rolled back to an older copy, or replaced)" }
        guard let keys else { return nil }
        let record: Record
        do {
            record = try keys.openingWithRecordKey { try RecordSealing.open(bytes, id: id, vaultID: vault.vaultID, key: $0) }
        } catch {
            return "\(error)"
        }
        if record.revision != ledger.revision { return "revision \(record.revision), the index expects \(ledger.revision)" }
        // Every chunk of every attachment, against the size and digest the record states.
        attachments = record.attachments.map(\.id)
        for attachment in record.attachments {
            do { try vault.readAttachment(attachment, of: record) { _ in } } catch { return "\(error)" }
        }
        // Identities may have been removed or re-ranked through the store API; anything the
        // index offers must still be what the record holds.
        let expected = Vault.indexEntries(of: record)
        var items = 0
        for entry in entries {
            switch entry {
            case .identity(let identity):
                guard let held = expected.first(where: { $0.isSameEntry(as: entry) }), case .identity(let wanted) = held,
                      wanted.user == identity.user else {
                    return "the identity store offers \(identity.user)@\(identity.serviceIdentifier), which the record does not hold"
                }
                if identity.mode != wanted.mode {
                    return "the identity store holds match mode '\(identity.mode.rawValue)', the record '\(wanted.mode.rawValue)'"
                }
                if identity.name != wanted.name { return "the identity store names it '\(identity.name)', the record '\(wanted.name)'" }
            case .item(let item):
                items += 1
                guard expected.contains(entry) else { return "its item entry (\(item.kind.rawValue) '\(item.name)') does not match the record" }
            case .attribute:
                guard expected.contains(entry) else { return "the index holds a Secret Service attribute the record does not" }
            }
        }
        let attributes = { (list: [BucketEntry]) in list.filter { if case .attribute = $0 { true } else { false } }.count }
        if attributes(entries) != attributes(expected) { return "\(attributes(entries)) attribute entries in the index, expected \(attributes(expected))" }
        if layout == .items && items != 1 { return "\(items) item entries in the index, expected 1" }
        return nil
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
