import FoundationEssentials
import Glibc

/// What `verify` found: every problem with the file it concerns.
public struct VerificationReport: Sendable {
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        public let file: String
        public let message: String
        public var description: String { "\(file): \(message)" }
    }

    public internal(set) var problems: [Problem] = []
    public internal(set) var recordCount = 0
    /// The index generation, when the index could be read.
    public internal(set) var generation: UInt64?
    /// Whether the index was checked (needs the vault unlocked or the store enabled here).
    public internal(set) var checkedIndex = false
    /// Whether every record was decrypted (needs the vault unlocked).
    public internal(set) var checkedContents = false

    public var isClean: Bool { problems.isEmpty }

    mutating func add(_ file: String, _ message: String) {
        problems.append(Problem(file: file, message: message))
    }
}

/// Checks a vault as deeply as the available keys allow (SPEC.md §10): without any key, the
/// structure, modes and sizes of every file; with the index key, that the index and the record
/// files agree (revision, ciphertext hash, generation); with the vault key, every record.
struct VaultVerifier {
    let vault: Vault
    var container: GroupContainer { vault.container }
    var fileSystem: FileSystem { vault.fileSystem }

    func run() -> VerificationReport {
        var report = VerificationReport()
        let index = try? vault.identityIndex()
        if let index {
            do {
                // A crashed writer's journal is finished first, as any access would.
                try vault.fileLock.withLock(.exclusive) { try vault.recover(index) }
            } catch {
                report.add(index.journalPath, "\(error)")
            }
        }
        checkLayout(&report)
        let files = recordFiles(&report)
        report.recordCount = files.count
        guard let index else { return report }
        do {
            try vault.fileLock.withLock(.shared) { try checkIndex(index, files: files, into: &report) }
        } catch {
            report.add(index.manifestPath, "\(error)")
        }
        return report
    }

    // MARK: Without keys

    private func checkLayout(_ report: inout VerificationReport) {
        let expected: Set<String> = ["vault.coffer", "lock", "records", "index", "tmp"]
        for name in (try? fileSystem.contentsOfDirectory(container.path)) ?? [] where !expected.contains(name) {
            report.add(container.path + "/" + name, "unexpected file in the container")
        }
        for name in (try? fileSystem.contentsOfDirectory(container.temporaryDirectory)) ?? [] {
            report.add(container.temporaryDirectory + "/" + name, "temp file of an interrupted write (removed by the next write)")
        }
        checkMode(container.headerPath, directory: false, &report)
    }

    /// Every well-named record file, checked for type, mode, size and envelope structure.
    private func recordFiles(_ report: inout VerificationReport) -> [RecordID: String] {
        var files: [RecordID: String] = [:]
        for shard in (try? fileSystem.contentsOfDirectory(container.recordsDirectory)) ?? [] {
            let shardPath = container.recordsDirectory + "/" + shard
            guard shard.count == 2, Hex.decode(shard) != nil else {
                report.add(shardPath, "unexpected entry in records/")
                continue
            }
            checkMode(shardPath, directory: true, &report)
            for name in (try? fileSystem.contentsOfDirectory(shardPath)) ?? [] {
                let path = shardPath + "/" + name
                guard let id = try? RecordID(hex: name), name.hasPrefix(shard) else {
                    report.add(path, "not a record file name (32 lowercase hex digits in the shard of its first byte)")
                    continue
                }
                guard checkMode(path, directory: false, &report) else { continue }
                do {
                    _ = try RecordEnvelope.decode(fileSystem.readFile(path, limit: RecordEnvelope.maximumFileLength))
                    files[id] = path
                } catch {
                    report.add(path, "\(error)")
                }
            }
        }
        return files
    }

    @discardableResult
    private func checkMode(_ path: String, directory: Bool, _ report: inout VerificationReport) -> Bool {
        guard let info = try? fileSystem.status(path) else {
            report.add(path, "missing")
            return false
        }
        let kind = info.st_mode & S_IFMT
        guard kind == (directory ? S_IFDIR : S_IFREG) else {
            report.add(path, kind == S_IFLNK ? "is a symbolic link" : "is not a \(directory ? "directory" : "regular file")")
            return false
        }
        if info.st_mode & 0o077 != 0 {
            report.add(path, "mode \(String(info.st_mode & 0o777, radix: 8)) is open to group or others")
        }
        return true
    }

    // MARK: With the index key

    private func checkIndex(_ index: IdentityIndex, files: [RecordID: String], into report: inout VerificationReport) throws {
        let manifest = try index.readManifest()
        report.generation = manifest.generation
        report.checkedIndex = true
        let highest = vault.deviceState.highestGeneration()
        if manifest.generation < highest {
            report.add(index.manifestPath, "generation \(manifest.generation), but this device has seen \(highest): the vault was rolled back")
        }
        let live = Set(manifest.shards.compactMap { $0?.hex })
        for name in (try? fileSystem.contentsOfDirectory(index.shardsDirectory)) ?? [] where !live.contains(name) {
            report.add(index.shardsDirectory + "/" + name, "shard not referenced by the manifest")
        }
        var ledger: [RecordID: LedgerEntry] = [:]
        var identities: [RecordID: [IdentityEntry]] = [:]
        let shards = try? fileSystem.openDirectory(index.shardsDirectory)
        for slot in 0..<IndexManifest.slotCount where manifest.shards[slot] != nil {
            do {
                if slot < IndexManifest.identitySlots {
                    for entry in try index.identities(inSlot: slot, of: manifest, shards: shards) {
                        identities[entry.recordID, default: []].append(entry)
                        if index.identitySlot(for: entry.key, layout: manifest.layout) != slot {
                            report.add(index.shardPath(manifest.shards[slot]!), "identity of \(entry.recordID) filed in the wrong bucket")
                        }
                    }
                } else {
                    for entry in try index.ledger(inSlot: slot, of: manifest, shards: shards) { ledger[entry.recordID] = entry }
                }
            } catch {
                report.add(index.shardPath(manifest.shards[slot]!), "\(error)")
            }
        }
        for (id, entry) in ledger where files[id] == nil {
            report.add(container.recordPath(id), "missing: the index lists revision \(entry.revision) (deleted outside Coffer)")
        }
        for id in identities.keys where ledger[id] == nil {
            report.add(container.recordPath(id), "the identity store names a record the ledger does not know")
        }
        let keys = try? vault.keys()
        report.checkedContents = keys != nil
        let work = files.sorted { $0.key < $1.key }
        // Hashing and decrypting 100,000 files is the slow part: all cores share it.
        let messages = try concurrentMap(work.count) { position in
            let (id, path) = work[position]
            return checkRecord(id, path: path, ledger: ledger[id], identities: identities[id] ?? [], keys: keys)
        }
        for ((_, path), message) in zip(work, messages) {
            if let message { report.add(path, message) }
        }
    }

    /// One record against its ledger entry and identities; `nil` when it is sound.
    private func checkRecord(
        _ id: RecordID, path: String, ledger: LedgerEntry?, identities: [IdentityEntry], keys: VaultKeys?
    ) -> String? {
        guard let ledger else { return "not in the index (added outside Coffer, or a deleted record put back)" }
        guard let bytes = try? fileSystem.readFile(path, limit: RecordEnvelope.maximumFileLength),
              let hash = try? ciphertextHash(bytes)
        else { return "unreadable" }
        guard hash == ledger.ciphertextHash else { return "does not match the index (rolled back to an older copy, or replaced)" }
        guard let keys else { return nil }
        let record: Record
        do {
            record = try RecordSealing.open(bytes, id: id, vaultID: vault.vaultID, key: keys.recordKey)
        } catch {
            return "\(error)"
        }
        if record.revision != ledger.revision { return "revision \(record.revision), the index expects \(ledger.revision)" }
        for identity in identities where !record.serviceIdentifiers.contains(identity.serviceIdentifier) || identity.user != record.user {
            return "the identity store offers \(identity.user)@\(identity.serviceIdentifier), which the record does not hold"
        }
        for identity in identities where identity.mode != record.matchMode {
            return "the identity store holds match mode '\(identity.mode.rawValue)', the record '\(record.matchMode.rawValue)'"
        }
        return nil
    }
}

extension Vault {
    /// Checks the vault as deeply as the available keys allow. Never changes anything except
    /// finishing a crashed writer's journal, as every access does.
    public func verify() -> VerificationReport {
        VaultVerifier(vault: self).run()
    }
}
