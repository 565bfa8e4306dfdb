import CofferFormat
/// One record's part in a write transaction: its new sealed bytes (or deletion) and identities.
package struct RecordChange {
    let id: RecordID
    /// New file contents; `nil` deletes the record.
    let sealed: [UInt8]?
    let revision: UInt64
    let entries: [BucketEntry]
    /// An add: no file of this id exists, so there is no old file to hash and the new one is
    /// created in place (a fresh id, or a record sync brings to this device).
    let isAdd: Bool

    package init(id: RecordID, sealed: [UInt8]?, revision: UInt64, entries: [BucketEntry], isAdd: Bool? = nil) {
        self.id = id
        self.sealed = sealed
        self.revision = revision
        self.entries = entries
        self.isAdd = isAdd ?? (revision == 1 && sealed != nil)
    }
}

extension Vault {
    // MARK: Keys and access

    /// The index keys: derived from the vault key when unlocked, else this device's copy when
    /// the identity store is enabled here.
    func indexKeys() throws(VaultError) -> IndexKeys {
        if let keys = try? keys() { return try mappingErrors(file: "index key") { try IndexKeys(vaultKeys: keys) } }
        guard let deviceKey = deviceState.indexKey() else { throw .locked }
        return try mappingErrors(file: "index key") { try IndexKeys(indexKey: deviceKey) }
    }

    /// The index of the container held open as `opened` (opened now when not given).
    package func identityIndex(_ opened: OpenContainer? = nil) throws(VaultError) -> IdentityIndex {
        let keys = try indexKeys()
        let cache = configuration.identityBucketCache
        if let opened {
            return IdentityIndex(opened: opened, vaultID: vaultID, fileSystem: fileSystem, keys: keys, cache: cache, device: deviceState,
                                 partsThreshold: configuration.bucketPartsThreshold)
        }
        let fresh = try mappingErrors(file: container.path) { try openContainer() }
        return IdentityIndex(opened: fresh, vaultID: vaultID, fileSystem: fileSystem, keys: keys, cache: cache, device: deviceState,
                                 partsThreshold: configuration.bucketPartsThreshold)
    }

    /// Runs `body` on a consistent view of the index (shared lock), finishing a crashed
    /// writer's transaction first, and checks for a whole-vault rollback.
    ///
    /// A team read that fails under the keys held is tried once more with the keys its
    /// `team.coffer` names now, when they are others (a rotation by another process since this
    /// one took its keys, SPEC.md §16.5): a rotation met is never called tampering.
    package func readingIndex<Result>(_ body: (IdentityIndex, IndexManifest) throws -> Result) throws(VaultError) -> Result {
        do {
            return try readingIndexOnce(body)
        } catch {
            guard refreshTeamKeys() else { throw error }
            return try readingIndexOnce(body)
        }
    }

    private func readingIndexOnce<Result>(_ body: (IdentityIndex, IndexManifest) throws -> Result) throws(VaultError) -> Result {
        let index = try identityIndex()
        let lock = fileLock(index.opened)
        return try mappingErrors(file: index.manifestPath) {
            if index.journalExists { try lock.withLock(.exclusive) { try recover(index) } }
            return try lock.withLock(.shared) {
                let manifest = try index.readManifest(reusing: configuration.identityBucketCache?.openedManifest(of: vaultID) ?? openedManifest)
                try checkGeneration(of: manifest)
                return try body(index, manifest)
            }
        }
    }

    /// The entries the index holds for record `id` (to carry its ranks over to a new version).
    package func entries(of id: RecordID, index: IdentityIndex, manifest: IndexManifest) throws -> [BucketEntry] {
        var entries: [BucketEntry] = []
        for slot in try index.ledgerEntry(for: id, in: manifest)?.identitySlots ?? [] {
            entries += try index.entries(inSlot: Int(slot), of: manifest).filter { $0.recordID == id }
        }
        return entries
    }

    // MARK: Transactions

    /// Applies `changes` under the exclusive lock: journal, record files, then the index commit
    /// (SPEC.md §7.5). A failure part-way leaves a journal that the next access finishes.
    /// - Parameter opened: the container the caller's `writeTransaction` holds open and locked.
    /// - Parameter isInterrupted: asked before each file and before the index commit (an import
    ///   stopped by Ctrl-C): a yes throws `VaultError.interrupted`, and the adds are taken back.
    package func commit(_ changes: [RecordChange], in opened: OpenContainer, undoAddsOnFailure: Bool = false, isInterrupted: (() -> Bool)? = nil) throws {
        func checkInterrupt() throws { if isInterrupted?() == true { throw VaultError.interrupted } }
        try checkInterrupt()
        let index = try identityIndex(opened)
        try recover(index)
        let manifest = try index.readManifest()
        try checkGeneration(of: manifest)
        var journalChanges: [IndexJournal.Change] = []
        for change in changes {
            let oldBytes = change.isAdd ? nil : try? readRecordFile(change.id, in: opened)
            journalChanges.append(IndexJournal.Change(
                recordID: change.id, oldHash: try oldBytes.map { Hex.encode(try ciphertextHash($0)) },
                newHash: try change.sealed.map { Hex.encode(try ciphertextHash($0)) },
                revision: change.revision, entries: change.entries))
        }
        let journal = IndexJournal(generation: manifest.generation + 1, changes: journalChanges)
        try index.writeJournal(journal)
        var written: [RecordID] = []
        // One record: fsync it. Many (an import): write them all and let the index commit flush
        // them with its shards in one `syncfs` before the manifest; recovery removes any add a
        // crash left torn.
        let durableEach = changes.count == 1
        do {
            let inParallel = !durableEach && fileSystem.faults == nil && changes.allSatisfy(\.isAdd)
            if inParallel {
                // An import: new files only, created on every core (creating 10,000 inodes is
                // most of its system time). Shard directories are made first, in order.
                for change in changes { _ = try opened.shard(of: change.id, create: true, durable: false) }
                written = changes.map(\.id)  // on a failure, remove whatever did land
                _ = try concurrentMap(changes.count) { index in
                    try checkInterrupt()
                    let change = changes[index]
                    try fileSystem.writeNewFile(change.sealed ?? [], to: change.id.hex, in: opened.shard(of: change.id), durable: false)
                }
            }
            for change in changes where !inParallel {
                try checkInterrupt()
                if let sealed = change.sealed {
                    let shard = try opened.shard(of: change.id, create: true, durable: durableEach)
                    if change.isAdd {
                        // Only the journal names it until the commit: created in place (SPEC.md §3.4).
                        try fileSystem.writeNewFile(sealed, to: change.id.hex, in: shard, durable: durableEach)
                    } else {
                        try fileSystem.writeAtomically(sealed, to: change.id.hex, in: shard, via: opened.temporary, durable: durableEach)
                    }
                } else {
                    try removeRecordFile(change.id, in: opened)
                }
                written.append(change.id)
            }
            try checkInterrupt()  // the last moment before the commit point
            var editor = IndexEditor(index: index, manifest: manifest, journaled: true, details: itemDetails(in: opened))
            for (change, entry) in zip(changes, journalChanges) {
                try editor.setRecord(
                    change.id, revision: change.revision, hash: change.sealed == nil ? nil : Hex.decode(entry.newHash ?? ""),
                    entries: change.entries)
            }
            let committed = try editor.commit(
                generation: journal.generation, unsyncedDirectories: durableEach ? [] : [opened.records])
            try index.removeJournal()
            try deviceState.recordGeneration(committed.generation)
        } catch {
            if undoAddsOnFailure {
                // All or nothing for imports: take back what this call added.
                for id in written { if let shard = try? opened.shard(of: id) { fileSystem.removeQuietly(id.hex, in: shard) } }
            }
            try? recover(index, isOwnWrite: true)  // make the index agree with whatever did reach the disk
            throw error
        }
    }

    /// Finishes or discards a crashed writer's transaction. Caller holds the exclusive lock.
    ///
    /// An uncommitted transaction's *new* records are removed (so an import lands whole or not
    /// at all); an updated or deleted record is taken as it is on disk when its file is the
    /// journal's new version (its old bytes are gone). A file matching neither the old nor the
    /// new hash is left for `verify` to report: it was tampered with.
    /// - Parameter isOwnWrite: this process undoing its own failed write (nothing to tell).
    package func recover(_ index: IdentityIndex, isOwnWrite: Bool = false) throws {
        guard let journal = try index.readJournal() else { return }
        var editor = IndexEditor(index: index, manifest: try index.readManifest(), journaled: true)
        if editor.manifest.generation < journal.generation {
            let added = journal.changes.count { $0.oldHash == nil && $0.newHash != nil }
            if !isOwnWrite {
                configuration.recoveryNotice?(added > 1
                    ? "finishing an interrupted write: removing the \(added) records it had begun to add…"
                    : "finishing an interrupted write…")
            }
            var rolledForward = false
            for change in journal.changes where change.newHash != change.oldHash {
                if change.oldHash == nil {
                    try removeRecordFile(change.recordID, in: index.opened)
                    continue
                }
                let bytes = try? readRecordFile(change.recordID, in: index.opened)
                let current = try bytes.map { Hex.encode(try ciphertextHash($0)) }
                guard current == change.newHash else { continue }
                try editor.setRecord(
                    change.recordID, revision: change.revision, hash: current.flatMap(Hex.decode),
                    entries: change.entries)
                rolledForward = true
            }
            if rolledForward { try editor.commit(generation: journal.generation) }
        }
        try index.removeJournal()
        try index.removeUnreferencedShards(keeping: editor.manifest)
    }

    // MARK: Generations (whole-vault rollback, SPEC.md §7.7)

    package func checkGeneration(of manifest: IndexManifest) throws {
        let highest = deviceState.highestGeneration()
        if manifest.generation < highest {
            throw VaultError.rolledBack(generation: manifest.generation, highestSeen: highest)
        }
        if manifest.generation > highest { try deviceState.recordGeneration(manifest.generation) }
    }

    /// Accepts the vault as it is now after `VaultError.rolledBack` (a deliberate restore of an
    /// older backup): this device forgets the newer generation it had seen.
    /// The index's generation (SPEC.md §7.7); needs the index key (the store enabled here, or
    /// the vault unlocked).
    public func indexGeneration() throws(VaultError) -> UInt64 {
        try readingIndex { _, manifest in manifest.generation }
    }

    public func acceptRollback() throws(VaultError) {
        let index = try identityIndex()
        try mappingErrors(file: index.manifestPath) {
            try deviceState.setHighestGeneration(try index.readManifest().generation)
        }
    }

    // MARK: Unlock hooks

    /// After a successful password unlock: a device that never configured the identity store
    /// enables it (the password is the authentication Apple requires), and a vault whose index
    /// is missing (a records-only copy) gets it rebuilt.
    func didUnlockWithPassword(keys: VaultKeys) throws(VaultError) {
        if deviceState.providerSetting() == .notConfigured {
            try mappingErrors(file: deviceState.directory) { try deviceState.enable(indexKey: keys.indexKey) }
        }
        if !(try identityIndex()).manifestExists { try rebuildIdentityIndex() }
        // Best effort: a corrupt or rolled-back index is reported by whatever reads it next,
        // not by the unlock.
        try? migrateIndexLayout()
    }

    /// Whether the index files each item's tags and date (layout 4, SPEC.md §7.3), which a
    /// listing by tag or by date reads. An index an older Coffer wrote files neither until a
    /// write or a password unlock rewrites it; with the vault key at hand it is rewritten here
    /// first, so a reader never takes "no tags filed" for "no item carries the tag".
    public func indexFilesItemDetails() throws(VaultError) -> Bool {
        if try readingIndex({ _, manifest in manifest.layout.hasDetails }) { return true }  // the usual answer: one read
        guard isUnlocked else { return false }
        try migrateIndexLayout()
        return try readingIndex { _, manifest in manifest.layout.hasDetails }
    }

    /// Rewrites an index of an older layout as the current one (SPEC.md §7.3) in one commit, if
    /// it is one; any write does the same on its way. Layout 3 to 4 reads every record, so
    /// it needs the vault unlocked; from 1 or 2 to 3 needs only the index key.
    func migrateIndexLayout() throws(VaultError) {
        let layout = try readingIndex { _, manifest in manifest.layout }
        guard layout != .current else { return }
        if isUnlocked { configuration.recoveryNotice?("filing each item's tags and date in the index (once; a large vault takes seconds)…") }
        try writeTransaction { opened throws in
            let index = try identityIndex(opened)
            try recover(index)
            var editor = IndexEditor(index: index, manifest: try index.readManifest(), details: itemDetails(in: opened))
            try checkGeneration(of: editor.manifest)
            try editor.migrateToCurrentLayout()
            try deviceState.recordGeneration(try editor.commit().generation)
        }
    }

    /// Rebuilds the whole index from the records (needs the vault unlocked). Ranks and
    /// suggestions removed through the store API are reset; integrity data is recomputed.
    public func rebuildIdentityIndex() throws(VaultError) {
        try writeTransaction { opened throws in try rebuildIdentityIndex(in: opened) }
    }

    /// `rebuildIdentityIndex()` for a caller that holds the exclusive lock (`opened`): a team's
    /// key rotation rebuilds it in the same hold as it writes the new key (SPEC.md §16.4).
    package func rebuildIdentityIndex(in opened: OpenContainer) throws {
        let keys = try keys()
        let index = try identityIndex(opened)
        try? index.removeJournal()
        let old = (try? index.readManifest()) ?? IndexManifest()
        var editor = IndexEditor(index: index, manifest: IndexManifest(generation: old.generation))
        for id in try recordIDs(in: opened) {
            let bytes = try readRecordFile(id, in: opened)
            let record = try mappingErrors(file: container.recordPath(id)) {
                try keys.openingWithRecordKey { try RecordSealing.open(bytes, id: id, vaultID: vaultID, key: $0) }
            }
            try editor.setRecord(id, revision: record.revision, hash: ciphertextHash(bytes), entries: Self.indexEntries(of: record))
        }
        let committed = try editor.commit(generation: max(old.generation, deviceState.highestGeneration()) + 1)
        try index.removeUnreferencedShards(keeping: committed)
        try deviceState.recordGeneration(committed.generation)
    }

    /// How an index edit reads a record's date and tags for its item entry (layout 4, SPEC.md
    /// §7.3); `nil` while the vault is locked.
    package func itemDetails(in opened: OpenContainer) -> IndexEditor.DetailsReader? {
        guard let keys = try? keys() else { return nil }
        return { id, ledger in
            guard let record = try? self.checkedRecord(id, ledger: ledger, keys: keys, in: opened) else { return nil }
            return ItemDetails(of: record)
        }
    }

    /// A record's index entries (SPEC.md §7.3): a login has a password identity per service
    /// identifier (none when its password is empty and it holds a passkey: there is nothing to
    /// fill) and, when it has a one-time code, a one-time-code identity per service too, and a
    /// passkey identity for its passkey's relying party unless the passkey is hidden (§6.4); every record has one item entry,
    /// `listed` when it has no identity. Ranks are carried over from `previous`.
    package static func indexEntries(of record: Record, previous: [BucketEntry] = []) -> [BucketEntry] {
        var entries: [BucketEntry] = []
        var kinds: [IdentityKind] = record.kind != .login ? [] : record.otp == nil ? [.password] : [.password, .oneTimeCode]
        if record.passkey != nil, record.password.isEmpty { kinds.removeAll { $0 == .password } }
        for kind in kinds {
            for service in record.serviceIdentifiers {
                let rank = previous.lazy.compactMap { entry -> Int64? in
                    guard case .identity(let old) = entry, old.kind == kind, old.serviceIdentifier == service else { return nil }
                    return old.rank
                }.first ?? 0
                entries.append(.identity(IdentityEntry(
                    recordID: record.id, serviceIdentifier: service, user: record.user, rank: rank, mode: record.matchMode,
                    key: ServiceKey(parsing: service), kind: kind, name: record.name)))
            }
        }
        if let passkey = record.passkey, record.kind == .login, passkey.hidden == nil {  // a hidden passkey is offered nowhere
            let service = CredentialServiceIdentifier(identifier: passkey.relyingPartyIdentifier, type: .domain)
            let rank = previous.lazy.compactMap { entry -> Int64? in
                guard case .identity(let old) = entry, old.kind == .passkey else { return nil }
                return old.rank
            }.first ?? 0
            entries.append(.identity(IdentityEntry(
                recordID: record.id, serviceIdentifier: service, user: passkey.userName, rank: rank, mode: record.matchMode,
                key: ServiceKey(parsing: service), kind: .passkey, name: record.name, credentialID: passkey.credentialID,
                userHandle: passkey.userHandle)))
        }
        // An SSH key's entry carries its public key instead, so the agent lists keys while locked.
        let summary = switch record.kind {
        case .sshKey: record.sshPublicKeyText ?? ""
        case .secret: record.secretService?.collection ?? SecretServiceMember.defaultCollection  // what a locked search names
        default: record.serviceIdentifiers.map(\.identifier).min(by: JSONValue.precedesInUTF8) ?? ""
        }
        entries.append(.item(ItemEntry(
            recordID: record.id, kind: record.kind, listed: entries.isEmpty, name: record.name, user: record.user, service: summary,
            details: ItemDetails(of: record))))
        // A Secret Service item: one attribute entry per pair, so a search while locked reads
        // one bucket per attribute (SPEC.md §6.5).
        if record.kind == .secret {
            let member = record.secretService ?? SecretServiceMember()
            for (name, value) in member.attributes {
                entries.append(.attribute(AttributeEntry(
                    recordID: record.id, digest: AttributeEntry.digest(name: name, value: value), collection: member.collection)))
            }
        }
        return entries.sharingItemDetails
    }
}
