import CofferProvider
import FoundationEssentials

/// What `verify` keeps of one bucket entry while it reads the rest: its record, the slot it was
/// found in, and a fingerprint of everything the check compares. A million entries kept whole
/// (strings, keys, arrays) took a verify past a gigabyte; as fingerprints they take 32 MB, and
/// only a record that fails its check has its entries read again, for the message.
struct EntryFingerprint: Comparable {
    enum Kind: UInt8 { case identity, item, attribute }

    let recordID: RecordID
    let fingerprint: Int
    let slot: UInt16
    let kind: Kind

    init(_ entry: BucketEntry, slot: Int) {
        recordID = entry.recordID
        fingerprint = Self.fingerprint(entry)
        self.slot = UInt16(slot)
        kind = switch entry {
        case .identity: .identity
        case .item: .item
        case .attribute: .attribute
        }
    }

    /// What the check compares of an entry (an identity's rank may change through the store
    /// API, so it is left out), hashed with this process's seed: compared only within one run.
    static func fingerprint(_ entry: BucketEntry) -> Int {
        var hasher = Hasher()
        switch entry {
        case .identity(let identity):
            hasher.combine(0)
            hasher.combine(identity.kind.rawValue)
            hasher.combine(identity.serviceIdentifier)
            hasher.combine(identity.user)
            hasher.combine(identity.mode.rawValue)
            hasher.combine(identity.name)
            hasher.combine(identity.details.modified)
            hasher.combine(identity.details.tags)
        case .item(let item):
            hasher.combine(1)
            hasher.combine(item.kind.rawValue)
            hasher.combine(item.listed)
            hasher.combine(item.name)
            hasher.combine(item.user)
            hasher.combine(item.service)
            hasher.combine(item.details.modified)
            hasher.combine(item.details.tags)
        case .attribute(let attribute):
            hasher.combine(2)
            hasher.combine(attribute.digest)
            hasher.combine(attribute.collection)
        }
        return hasher.finalize()
    }

    /// By record first (what the check needs), then by the rest, so that the order agrees with
    /// `==` (which compares every field).
    static func < (a: Self, b: Self) -> Bool {
        (a.recordID, a.slot, a.kind.rawValue, a.fingerprint) < (b.recordID, b.slot, b.kind.rawValue, b.fingerprint)
    }
}

// MARK: With the index key

extension VaultVerifier {
    /// The index against the records: the manifest's generation, every shard, and then one
    /// `records/<xx>` shard at a time — its ledger shard, its record files and the fingerprints
    /// of the bucket entries naming its records — so that what is held at once stays a 256th
    /// of the vault's ledger however large the vault.
    func checkIndex(
        _ index: IdentityIndex, files: [RecordID], attachments attachmentFiles: [AttachmentID: String], into report: inout VerificationReport
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
        let entries = bucketFingerprints(index, manifest, shards: shards, &report)
        let keys = try? vault.keys()
        report.checkedContents = keys != nil
        var named = Set<AttachmentID>()
        var filesAt = files.startIndex, entriesAt = entries.startIndex
        for byte in 0...255 {
            let slot = IndexManifest.identitySlots + byte
            var ledger: [RecordID: LedgerEntry] = [:]
            if let shard = manifest.shards[slot] {
                do {
                    for entry in try index.ledger(inSlot: slot, of: manifest, shards: shards) { ledger[entry.recordID] = entry }
                } catch {
                    report.add(index.shardPath(shard), "\(error)")
                }
            }
            let shardFiles = files[filesAt...].prefix { Int($0.firstByte) == byte }
            filesAt = shardFiles.endIndex
            let shardEntries = entries[entriesAt...].prefix { Int($0.recordID.firstByte) == byte }
            entriesAt = shardEntries.endIndex
            // A records/ the walk was refused (another owner, open to others) says nothing of
            // what is missing: that refusal is the problem reported.
            let present = Set(shardFiles)
            for (id, entry) in ledger.sorted(by: { $0.key < $1.key })
            where !present.contains(id) && !report.refusedDirectories.contains(GroupContainer.recordsName) {
                report.add(container.recordPath(id), "missing: the index lists revision \(entry.revision) (deleted outside Coffer)")
            }
            var previous: RecordID?
            for entry in shardEntries where entry.recordID != previous {
                previous = entry.recordID
                if ledger[entry.recordID] == nil {
                    report.add(container.recordPath(entry.recordID), "the identity store names a record the ledger does not know")
                }
            }
            // Hashing and decrypting the files is the slow part: all cores share it.
            let work = Array(shardFiles)
            let results = try concurrentMap(work.count) { position in
                let id = work[position]
                var attachments: [AttachmentID] = []
                let message = checkRecord(
                    id, ledger: ledger[id], entries: Self.slice(of: id, in: shardEntries), index: index, manifest: manifest, keys: keys,
                    attachments: &attachments)
                return (message, attachments)
            }
            for (id, (message, attachments)) in zip(work, results) {
                if let message { report.add(container.recordPath(id), message) }
                named.formUnion(attachments)
            }
        }
        // Every attachment file is some record's (a crash leaves none behind, SPEC.md §6.7).
        if keys != nil, report.problems.allSatisfy({ !$0.file.hasPrefix(container.recordsDirectory) }) {
            for (id, path) in attachmentFiles.sorted(by: { $0.key < $1.key }) where !named.contains(id) {
                report.add(path, "no item names this attachment (planted, or left by a program other than Coffer)")
            }
        }
    }

    /// Every identity bucket's entries as fingerprints, sorted by record; an entry filed in
    /// another bucket than its own, or a bucket that does not open, is reported here.
    private func bucketFingerprints(
        _ index: IdentityIndex, _ manifest: IndexManifest, shards: Directory?, _ report: inout VerificationReport
    ) -> [EntryFingerprint] {
        var fingerprints: [EntryFingerprint] = []
        for slot in 0..<IndexManifest.identitySlots {
            guard let shard = manifest.shards[slot] else { continue }
            do {
                for entry in try index.entries(inSlot: slot, of: manifest, shards: shards) {
                    fingerprints.append(EntryFingerprint(entry, slot: slot))
                    if index.slot(for: entry, layout: manifest.layout) != slot {
                        report.add(index.shardPath(shard), "entry of \(entry.recordID) filed in the wrong bucket")
                    }
                }
            } catch {
                report.add(index.shardPath(shard), "\(error)")
            }
        }
        fingerprints.sort()
        return fingerprints
    }

    /// The entries of record `id` in `entries` (sorted by record).
    private static func slice(of id: RecordID, in entries: ArraySlice<EntryFingerprint>) -> ArraySlice<EntryFingerprint> {
        var low = entries.startIndex, high = entries.endIndex
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].recordID < id { low = middle + 1 } else { high = middle }
        }
        return entries[low...].prefix { $0.recordID == id }
    }

    /// One record against its ledger entry and index entries; `nil` when it is sound.
    private func checkRecord(
        _ id: RecordID, ledger: LedgerEntry?, entries: ArraySlice<EntryFingerprint>, index: IdentityIndex, manifest: IndexManifest,
        keys: VaultKeys?, attachments: inout [AttachmentID]
    ) -> String? {
        let bytes: [UInt8]
        do {
            bytes = try vault.readRecordFile(id, in: index.opened)
            try checkEnvelope(bytes)
        } catch {
            return "\(error)"
        }
        guard let ledger else { return "not in the index (added outside Coffer, or a deleted record put back)" }
        guard let hash = try? ciphertextHash(bytes) else { return "unreadable" }
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
        let expected = Vault.indexEntries(of: record).map { manifest.layout.hasDetails ? $0 : $0.withoutDetails }
        let offered = Set(expected.map(EntryFingerprint.fingerprint))
        if !entries.allSatisfy({ offered.contains($0.fingerprint) }) {
            return entryProblem(of: id, slots: Set(entries.map(\.slot)), expected: expected, index: index, manifest: manifest)
        }
        let attributes = entries.count { $0.kind == .attribute }
        let expectedAttributes = expected.count { if case .attribute = $0 { true } else { false } }
        if attributes != expectedAttributes { return "\(attributes) attribute entries in the index, expected \(expectedAttributes)" }
        let items = entries.count { $0.kind == .item }
        if manifest.layout.hasItemEntries && items != 1 { return "\(items) item entries in the index, expected 1" }
        return nil
    }

    /// Why record `id`'s entries are not what it holds, from the entries themselves (read again
    /// from the buckets they were found in: only for a record that failed).
    private func entryProblem(of id: RecordID, slots: Set<UInt16>, expected: [BucketEntry], index: IdentityIndex, manifest: IndexManifest) -> String {
        var entries: [BucketEntry] = []
        for slot in slots.sorted() {
            entries += ((try? index.entries(inSlot: Int(slot), of: manifest)) ?? []).filter { $0.recordID == id }
        }
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
                if identity.details != wanted.details { return "the identity store holds another date or other tags than the record" }
            case .item(let item):
                guard expected.contains(entry) else { return "its item entry (\(item.kind.rawValue) '\(item.name)') does not match the record" }
            case .attribute:
                guard expected.contains(entry) else { return "the index holds a Secret Service attribute the record does not" }
            }
        }
        return "the identity store holds an entry the record does not"
    }
}
