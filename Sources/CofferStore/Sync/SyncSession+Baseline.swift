import CofferFormat
import FoundationEssentials

/// Staging only what changed since the last commit (`SyncBaseline`, SPEC.md §15.4).
extension SyncSession {
    var baselineName: String { vault.deviceState.syncBaselineName }
    var ledgerCopyPrefix: String { vault.deviceState.syncLedgerCopyPrefix }

    /// The baseline kept for `headTree`, when git's index is still the file it names.
    func validBaseline(for headTree: String) -> SyncBaseline? {
        guard let bytes = vault.deviceState.read(baselineName, limit: 64 << 20), let baseline = SyncBaseline.decode(bytes),
              baseline.tree == headTree, let index = git.indexStamp(), baseline.index == index else { return nil }
        return baseline
    }

    /// How many files differ from the last commit (`sync status`), when a baseline holds: git
    /// looks only at the paths it names. `nil` without one (the caller asks `git status`).
    func uncommittedFilesFromBaseline() throws -> Int? {
        guard let head = try git.syncRefs().head else { return nil }
        let tree = try git.tree(of: head)
        guard let baseline = validBaseline(for: tree) else { return nil }
        let opened = try vault.openContainer()
        let index = try vault.identityIndex(opened)
        guard let paths = try pathsChanged(since: baseline, manifest: index.readManifest(), index: index, in: opened) else { return nil }
        return try git.uncommittedFiles(among: paths.map(\.path), since: tree)
    }

    /// Every path that may differ between the container and the baseline's tree; `nil` when
    /// the baseline cannot say (a ledger copy missing or damaged).
    func pathsChanged(
        since baseline: SyncBaseline, manifest: IndexManifest, index: IdentityIndex, in opened: OpenContainer
    ) throws -> [SyncedPath]? {
        var paths: Set<SyncedPath> = [.header, .headerSeal, .teamKeys]
        paths.formUnion(baseline.pending.compactMap(SyncedPath.init))
        var current: [Int: [(id: RecordID, hash: Int)]] = [:]
        var payloads: [Int: [UInt8]] = [:]
        func ledger(_ shard: Int) throws -> [(id: RecordID, hash: Int)] {
            if let entries = current[shard] { return entries }
            let payload = try index.ledgerPayload(inSlot: IndexManifest.identitySlots + shard, of: manifest) ?? []
            let entries = payload.isEmpty ? [] : try IndexShardCoding.ledgerHashes(payload)
            (current[shard], payloads[shard]) = (entries, payload)
            return entries
        }
        // Records whose ledger entry came, went or changed: both shards are in id order.
        for shard in 0..<SyncBaseline.ledgerCount where manifest.shards[IndexManifest.identitySlots + shard] != baseline.ledger[shard] {
            var before: [UInt8] = []
            var old: [(id: RecordID, hash: Int)] = []
            if let id = baseline.ledger[shard] {
                guard let copy = vault.deviceState.read(ledgerCopyPrefix + id.hex, limit: IdentityIndex.maximumShardLength),
                      let payload = try? index.ledgerPayload(inFile: copy, slot: IndexManifest.identitySlots + shard, id: id),
                      let entries = try? IndexShardCoding.ledgerHashes(payload) else { return nil }
                (before, old) = (payload, entries)
            }
            let new = try ledger(shard)
            let after = payloads[shard] ?? []
            var (i, j) = (0, 0)
            while i < old.count || j < new.count {
                if j == new.count || (i < old.count && old[i].id < new[j].id) {
                    paths.formUnion([.record(old[i].id), .tombstone(old[i].id)])
                    i += 1
                } else if i == old.count || new[j].id < old[i].id {
                    paths.formUnion([.record(new[j].id), .tombstone(new[j].id)])
                    j += 1
                } else {
                    if !before[old[i].hash..<old[i].hash + 32].elementsEqual(after[new[j].hash..<new[j].hash + 32]) {
                        paths.formUnion([.record(new[j].id), .tombstone(new[j].id)])
                    }
                    (i, j) = (i + 1, j + 1)
                }
            }
        }
        // Shard directories that changed: in `records/`, a file no ledger entry names or an entry
        // without its file (planted, or removed by hand: the check then refuses or records it);
        // in `attachments/`, files that came or went (each is immutable). Every tombstone file
        // is staged, changed directory or not: git skips one whose status it has, and one
        // damaged in place (its directory unchanged) is then found and refused. A name that is
        // no id is left to a full staging, which refuses it.
        // Anything beside the shard directories (`records/notes.txt`) is left to a full staging.
        for name in SyncBaseline.parents {
            guard let parent = try fileSystem.directoryIfPresent(name, in: opened.root) else { continue }
            for entry in try fileSystem.contents(of: parent) where Hex.decode(entry)?.count != 1 { return nil }
        }
        let stamps = directoryStamps(in: opened)
        let changed = stamps.indices.filter { stamps[$0] != baseline.directories[$0] || baseline.directories[$0] == .unsettled }
        let listed = changed.filter { $0 >= 256 }.map { SyncBaseline.directoryPath($0) }
        let committed = listed.isEmpty ? [:] : try git.objects(in: baseline.tree, under: listed.map { $0.parent + "/" + $0.shard })
        let tombstoneDirectories = (256..<512).filter { stamps[$0] != .absent }
        let positions = Set(changed).union(tombstoneDirectories).sorted()
        // Record shards are listed and compared with their ledgers on every core: a later sync
        // of 100 edits at a million lists some 80 shards of 3,900 files each (0.45 s on one).
        let recordShards = positions.filter { $0 < 256 }
        let ledgers = try recordShards.map { try ledger($0).map(\.id) }  // read in order: `ledger` keeps them
        let compare = { [self] (position: Int) -> [RecordID]? in
            let (parent, shard) = SyncBaseline.directoryPath(recordShards[position])
            let names = fileNames(in: parent, shard, opened)
            var present: [RecordID] = []
            present.reserveCapacity(names.count)
            for name in names {
                guard let id = try? RecordID(hex: name) else { return nil }
                present.append(id)
            }
            return Self.differences(present.sorted(), ledgers[position])
        }
        let strays = fileSystem.faults == nil ? try concurrentMap(recordShards.count, compare) : recordShards.indices.map(compare)
        for ids in strays {
            guard let ids else { return nil }
            for id in ids { paths.insert(.record(id)) }
        }
        for position in positions where position >= 256 {
            let (parent, shard) = SyncBaseline.directoryPath(position)
            let names = fileNames(in: parent, shard, opened)
            switch position / 256 {
            case 1:
                for name in Set(names).union(committedNames(committed, parent, shard)) {
                    guard let id = try? RecordID(hex: name) else { return nil }
                    paths.insert(.tombstone(id))
                }
            default:
                for name in Set(names).symmetricDifference(committedNames(committed, parent, shard)) {
                    guard let id = try? AttachmentID(hex: name) else { return nil }
                    paths.insert(.attachment(id))
                }
            }
        }
        return Array(paths)
    }

    /// The ids in one of two sorted lists and not the other (files no ledger entry names, and
    /// entries without their file).
    static func differences(_ a: [RecordID], _ b: [RecordID]) -> [RecordID] {
        var (i, j, found) = (0, 0, [RecordID]())
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                found.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                found.append(b[j])
                j += 1
            } else {
                (i, j) = (i + 1, j + 1)
            }
        }
        return found
    }

    private func committedNames(_ objects: [String: String], _ parent: String, _ shard: String) -> Set<String> {
        let prefix = parent + "/" + shard + "/"
        return Set(objects.keys.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
    }

    private func fileNames(in parent: String, _ shard: String, _ opened: OpenContainer) -> [String] {
        guard let parent = try? fileSystem.directoryIfPresent(parent, in: opened.root),
              let directory = try? fileSystem.directoryIfPresent(shard, in: parent) else { return [] }
        return (try? fileSystem.contents(of: directory)) ?? []
    }

    /// The status of every shard directory of `records/`, `tombstones/` and `attachments/`.
    func directoryStamps(in opened: OpenContainer) -> [SyncBaseline.DirectoryStamp] {
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        var stamps: [SyncBaseline.DirectoryStamp] = []
        stamps.reserveCapacity(SyncBaseline.directoryCount)
        for name in SyncBaseline.parents {
            let parent = try? fileSystem.directoryIfPresent(name, in: opened.root)
            for shard in 0..<256 {
                guard let parent else {
                    stamps.append(.absent)
                    continue
                }
                if let status = try? fileSystem.status(Hex.encode([UInt8(shard)]), in: parent) {
                    stamps.append(
                        now - status.changed < SyncBaseline.unsettledWindow || status.kind != .directory
                            ? .unsettled : .present(inode: status.inode, modified: status.modified, changed: status.changed))
                } else {
                    stamps.append(.absent)  // none, or one that cannot be read: nothing staged from it
                }
            }
        }
        return stamps
    }

    /// Records this commit (its tree, the index git wrote, the ledger, the directories) as the
    /// baseline of the next; called under the vault's lock. Best effort: a baseline not saved
    /// only makes the next sync stage everything.
    /// - Parameter pending: paths that differ from `tree` or may (see `SyncBaseline.pending`).
    func saveBaseline(tree: String, manifest: IndexManifest, index: IdentityIndex, in opened: OpenContainer, pending: [SyncedPath] = []) {
        let device = vault.deviceState
        guard let indexStamp = git.indexStamp() else { return }
        let ledger = (0..<SyncBaseline.ledgerCount).map { manifest.shards[IndexManifest.identitySlots + $0] }
        let kept = Set(device.fileNames().filter { $0.hasPrefix(ledgerCopyPrefix) })
        do {
            for id in ledger.compactMap({ $0 }) where !kept.contains(ledgerCopyPrefix + id.hex) {
                try device.write(index.ledgerShardFile(id), to: ledgerCopyPrefix + id.hex, durable: false)
            }
            let baseline = SyncBaseline(
                tree: tree, index: indexStamp, ledger: ledger, directories: directoryStamps(in: opened),
                // Every tombstone is staged anyway.
                pending: pending.filter { if case .tombstone = $0 { false } else { true } }.map(\.path).sorted())
            try device.write(baseline.encoded(), to: baselineName, durable: false)
        } catch {
            try? device.remove(baselineName)
            return
        }
        let named = Set(ledger.compactMap { $0.map { ledgerCopyPrefix + $0.hex } })
        for name in kept where !named.contains(name) { try? device.remove(name) }
    }
}
