import CofferFormat
/// Edits a copy of the index in memory and commits it as a new generation: touched slots are
/// written as new shard files, then the manifest is replaced, then the old shards are removed.
/// Nothing a reader can see changes before the manifest rename (SPEC.md §7.5).
package struct IndexEditor {
    package let index: IdentityIndex
    private(set) var manifest: IndexManifest
    private var buckets: [Int: [BucketEntry]] = [:]
    private var ledgerShards: [Int: [LedgerEntry]] = [:]
    /// Slots changed since the last commit; only these are rewritten.
    private var dirtySlots = Set<Int>()

    /// Whether a journal covers this edit, so a crash's torn shard is removed by recovery
    /// and shards may be created in place (SPEC.md §3.4); otherwise they are written atomically.
    let journaled: Bool
    /// How this edit reads a record's details for its item entry; `nil` without the vault key.
    let details: DetailsReader?

    package init(index: IdentityIndex, manifest: IndexManifest, journaled: Bool = false, details: DetailsReader? = nil) {
        self.index = index
        self.manifest = manifest
        self.journaled = journaled
        self.details = details
    }

    // MARK: Reading through the edit

    mutating func entries(inSlot slot: Int) throws -> [BucketEntry] {
        if let cached = buckets[slot] { return cached }
        let entries = try index.entries(inSlot: slot, of: manifest)
        buckets[slot] = entries
        return entries
    }

    package mutating func ledgerEntry(for id: RecordID) throws -> LedgerEntry? {
        try ledger(inSlot: IndexManifest.ledgerSlot(of: id)).first { $0.recordID == id }
    }

    private mutating func ledger(inSlot slot: Int) throws -> [LedgerEntry] {
        if let cached = ledgerShards[slot] { return cached }
        let entries = try index.ledger(inSlot: slot, of: manifest)
        ledgerShards[slot] = entries
        return entries
    }

    /// The entries currently stored for record `id` (found through its ledger entry).
    package mutating func entries(of id: RecordID) throws -> [BucketEntry] {
        var result: [BucketEntry] = []
        for slot in try ledgerEntry(for: id)?.identitySlots ?? [] {
            result += try entries(inSlot: Int(slot)).filter { $0.recordID == id }
        }
        return result
    }

    /// The identities currently stored for record `id`.
    package mutating func identities(of id: RecordID) throws -> [IdentityEntry] {
        try entries(of: id).compactMap { entry in if case .identity(let identity) = entry { identity } else { nil } }
    }

    // MARK: Changes

    /// Records what the vault wrote for `id` (or its deletion, when `hash` is `nil`) and
    /// replaces its entries (identities and item entry) with `entries`.
    ///
    /// Shards are edited in place in the cache (`ledgerShards[slot]!.append`), never copied: an
    /// import of 100,000 records once copied a whole shard per record.
    mutating func setRecord(_ id: RecordID, revision: UInt64, hash: [UInt8]?, entries: [BucketEntry]) throws {
        try migrateToCurrentLayout()
        let ledgerSlot = IndexManifest.ledgerSlot(of: id)
        _ = try ledger(inSlot: ledgerSlot)  // loads the shard into the cache
        if let position = ledgerShards[ledgerSlot]!.firstIndex(where: { $0.recordID == id }) {
            let previous = ledgerShards[ledgerSlot]!.remove(at: position)
            try removeEntries(of: id, slots: previous.identitySlots)
        }
        if let hash {
            let slots = try addEntries(entries.sharingItemDetails)  // a store edit's new identities have none of their own
            ledgerShards[ledgerSlot]!.append(LedgerEntry(recordID: id, revision: revision, ciphertextHash: hash, identitySlots: slots))
        }
        dirtySlots.insert(ledgerSlot)
    }

    /// Replaces the entries of a record already in the ledger, keeping its integrity data.
    package mutating func setEntries(of id: RecordID, to entries: [BucketEntry]) throws {
        try migrateToCurrentLayout()
        guard let entry = try ledgerEntry(for: id) else { return }
        try setRecord(id, revision: entry.revision, hash: entry.ciphertextHash, entries: entries)
    }

    /// Every identity removed; item and attribute entries and the ledger stay (names,
    /// Secret Service lookups and integrity are not suggestions).
    package mutating func removeAllIdentities() throws {
        try migrateToCurrentLayout()
        var slotsOfRecord: [RecordID: [UInt8]] = [:]
        for slot in 0..<IndexManifest.identitySlots where manifest.shards[slot] != nil || buckets[slot] != nil {
            buckets[slot] = try entries(inSlot: slot).filter { entry in
                if case .identity = entry { return false }
                slotsOfRecord[entry.recordID, default: []].append(UInt8(slot))
                return true
            }
            dirtySlots.insert(slot)
        }
        for slot in IndexManifest.identitySlots..<IndexManifest.slotCount where manifest.shards[slot] != nil || ledgerShards[slot] != nil {
            dirtySlots.insert(slot)
            ledgerShards[slot] = try ledger(inSlot: slot).map { entry in
                var cleared = entry
                cleared.identitySlots = slotsOfRecord[entry.recordID] ?? []
                return cleared
            }
        }
    }

    /// Reads what a layout-4 entry holds beyond layout 3 — the record's `modified` and tags — for
    /// the record of `id` checked against `ledger`; `nil` for one it cannot read (a missing or
    /// tampered file, which `verify` reports: its entries file no tags and date 0).
    package typealias DetailsReader = (_ id: RecordID, _ ledger: LedgerEntry?) -> ItemDetails?

    /// The layout this edit writes: the current one when it can read the records' details
    /// (`details`, given by a writer holding the vault key), else the layout it found, or 3 for an
    /// older one — a writer that has only the index key (an identity-store edit while locked)
    /// cannot fill in the details, and leaves an index of layout 3 as it is.
    private var targetLayout: IndexLayout {
        details != nil || manifest.layout == .details ? .current : .items
    }

    /// Rewrites an index of an older layout (SPEC.md §7.3) as `targetLayout` within this edit.
    /// From layout 1 or 2, every identity is re-filed with its parsed service, each record gains
    /// the item entry a record of those formats has (a login, unnamed, not listed, its user and
    /// least service identifier), and every ledger entry's slots are recomputed. To layout 4,
    /// every item entry is given its record's date and tags (read with `details`). Runs once,
    /// in the first write after an upgrade; readers handle the older layouts until then.
    mutating func migrateToCurrentLayout() throws {
        let target = targetLayout
        guard manifest.layout != target else { return }
        if manifest.layout == .items {
            for slot in 0..<IndexManifest.identitySlots where manifest.shards[slot] != nil { _ = try entries(inSlot: slot) }
        } else {
            try refileOlderLayout()
        }
        manifest.layout = target  // every bucket of the old layout is in the cache by now
        guard target.hasDetails, let details else { return }
        // Every record once (by its item entry), read on every core: 100,000 records one after
        // another took 3.7 s of a password unlock.
        var ids: [RecordID] = []
        for slot in 0..<IndexManifest.identitySlots { for case .item(let item) in buckets[slot] ?? [] { ids.append(item.recordID) } }
        let ledgers = try ids.map { try ledgerEntry(for: $0) }
        let read = try concurrentMap(ids.count) { details(ids[$0], ledgers[$0]) }
        var byRecord: [RecordID: ItemDetails] = [:]
        for (id, found) in zip(ids, read) { if let found { byRecord[id] = found } }
        for slot in 0..<IndexManifest.identitySlots where buckets[slot] != nil {
            var entries = buckets[slot]!
            for position in entries.indices { if let found = byRecord[entries[position].recordID] { entries[position].details = found } }
            buckets[slot] = entries
            dirtySlots.insert(slot)
        }
    }

    /// Layout 1 or 2 re-filed as layout 3's entries (`migrateToCurrentLayout`).
    private mutating func refileOlderLayout() throws {
        var identities: [IdentityEntry] = []
        for slot in 0..<IndexManifest.identitySlots where manifest.shards[slot] != nil {
            for case .identity(let identity) in try entries(inSlot: slot) { identities.append(identity) }  // parsed from layout 1
            buckets[slot] = []
            dirtySlots.insert(slot)
        }
        manifest.layout = .items
        var entries = identities.map(BucketEntry.identity)
        var items: [RecordID: ItemEntry] = [:]
        for identity in identities {
            let service = identity.serviceIdentifier.identifier
            if let item = items[identity.recordID], !JSONValue.precedesInUTF8(service, item.service) { continue }
            items[identity.recordID] = ItemEntry(
                recordID: identity.recordID, kind: .login, listed: false, name: "", user: identity.user, service: service)
        }
        entries += items.values.map(BucketEntry.item)
        var slotsOfRecord: [RecordID: Set<UInt8>] = [:]
        for entry in entries {
            let slot = index.slot(for: entry, layout: .items)
            if buckets[slot] == nil { buckets[slot] = [] }
            buckets[slot]!.append(entry)
            dirtySlots.insert(slot)
            slotsOfRecord[entry.recordID, default: []].insert(UInt8(slot))
        }
        for slot in IndexManifest.identitySlots..<IndexManifest.slotCount where manifest.shards[slot] != nil {
            ledgerShards[slot] = try ledger(inSlot: slot).map { entry in
                var refiled = entry
                refiled.identitySlots = (slotsOfRecord[entry.recordID] ?? []).sorted()
                return refiled
            }
            dirtySlots.insert(slot)
        }
    }

    private mutating func removeEntries(of id: RecordID, slots: [UInt8]) throws {
        for slot in Set(slots.map(Int.init)) {
            buckets[slot] = try entries(inSlot: slot).filter { $0.recordID != id }
            dirtySlots.insert(slot)
        }
    }

    /// Adds one record's entries (its old ones are already removed, so only the new list itself
    /// can repeat an entry: checking whole buckets made an import quadratic in bucket size).
    private mutating func addEntries(_ entries: [BucketEntry]) throws -> [UInt8] {
        var slots = Set<Int>()
        for (position, entry) in entries.enumerated() where !entries[..<position].contains(where: { $0.isSameEntry(as: entry) }) {
            let slot = index.slot(for: entry, layout: manifest.layout)
            _ = try self.entries(inSlot: slot)  // loads the bucket into the cache
            buckets[slot]!.append(entry)
            dirtySlots.insert(slot)
            slots.insert(slot)
        }
        return slots.sorted().map(UInt8.init)
    }

    // MARK: Commit

    /// Writes the touched slots and a manifest of `generation` (default: the next one).
    /// - Parameter unsyncedDirectories: where the caller wrote files without syncing them (an
    ///   import's records); they are flushed with the shards, once, before the manifest.
    /// - Returns: the committed manifest.
    @discardableResult
    package mutating func commit(generation: UInt64? = nil, unsyncedDirectories: [Directory] = []) throws -> IndexManifest {
        var next = manifest
        next.generation = generation ?? manifest.generation + 1
        var replaced: [ShardID] = []
        // A few shards: fsync each. Many (an import touches all 512), or other writes waiting
        // for a flush anyway: one flush of the file system before the manifest names anything.
        let durableEach = !journaled || (dirtySlots.count <= 8 && unsyncedDirectories.isEmpty)
        let shards = try index.opened.shards(create: true)
        for slot in dirtySlots.sorted() {
            let payload: [UInt8]?
            if slot < IndexManifest.identitySlots {
                let entries = buckets[slot] ?? []
                payload = entries.isEmpty ? nil : IndexShardCoding.encode(entries, layout: next.layout)
            } else {
                let entries = ledgerShards[slot] ?? []
                payload = entries.isEmpty ? nil : IndexShardCoding.encode(ledger: entries)
            }
            try replace(slot: slot, in: &next, replaced: &replaced, payload: payload, durable: durableEach)
        }
        if !durableEach { try index.fileSystem.syncFileSystems(of: [shards] + unsyncedDirectories) }
        try index.writeManifest(next)
        for id in replaced { index.fileSystem.removeQuietly(id.hex, in: shards) }
        // The unlinks made durable, or a power loss brings the replaced shards back as files no
        // manifest names (`verify` would report them until the next commit).
        if !replaced.isEmpty { try? index.fileSystem.sync(shards) }
        manifest = next
        buckets = [:]
        ledgerShards = [:]
        dirtySlots = []
        return next
    }

    private func replace(slot: Int, in manifest: inout IndexManifest, replaced: inout [ShardID], payload: [UInt8]?, durable: Bool) throws {
        if let old = manifest.shards[slot] { replaced.append(old) }
        manifest.shards[slot] = try payload.map { try index.writeShard($0, slot: slot, inPlace: journaled, durable: durable) }
    }
}
