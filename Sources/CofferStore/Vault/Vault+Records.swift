import CofferFormat
import FoundationEssentials

/// What a caller supplies to add an item; the vault assigns id, dates and revision. It is the
/// item a person writes (`ItemContent`) and what only an import or a registration brings along:
/// history, dates, a passkey, a Secret Service item's attributes.
public struct RecordDraft: Sendable {
    public var content: ItemContent
    /// Previous passwords an importer brings along (newest first).
    public var passwordHistory: [PasswordHistoryEntry]
    /// When the item was made and last changed, for an import that knows (default: now).
    public var created: Date?
    public var modified: Date?
    /// A passkey for the login (SPEC.md §6.4): a registration's, or an import's.
    public var passkey: Passkey?
    /// A Secret Service item's collection, attributes and content type (SPEC.md §6.5).
    public var secretService: SecretServiceMember?
    /// A site's report that the password is unused (an import of Coffer's own export brings it).
    public var passwordReportedUnused: Date?

    public init(
        _ content: ItemContent, passwordHistory: [PasswordHistoryEntry] = [], created: Date? = nil, modified: Date? = nil,
        passkey: Passkey? = nil, secretService: SecretServiceMember? = nil, passwordReportedUnused: Date? = nil
    ) {
        self.passwordReportedUnused = passwordReportedUnused
        self.content = content
        self.passwordHistory = passwordHistory
        self.created = created
        self.modified = modified
        self.passkey = passkey
        self.secretService = secretService
    }

    public init(
        serviceIdentifiers: [CredentialServiceIdentifier], user: String, password: String,
        notes: String = "", fields: [RecordField] = [], matchMode: MatchMode = .host, name: String = "", kind: ItemKind = .login,
        tags: [String] = [], otp: String? = nil, passwordHistory: [PasswordHistoryEntry] = [], created: Date? = nil, modified: Date? = nil,
        passkey: Passkey? = nil, secretService: SecretServiceMember? = nil
    ) {
        self.init(
            ItemContent(
                kind: kind, name: name, user: user, password: password, services: serviceIdentifiers, tags: tags, matchMode: matchMode,
                fields: fields, otp: otp, notes: notes),
            passwordHistory: passwordHistory, created: created, modified: modified, passkey: passkey, secretService: secretService)
    }

    // The item's members, by the names a record has.
    public var serviceIdentifiers: [CredentialServiceIdentifier] { get { content.services } set { content.services = newValue } }
    public var user: String { get { content.user } set { content.user = newValue } }
    public var password: String { get { content.password } set { content.password = newValue } }
    public var notes: String { get { content.notes } set { content.notes = newValue } }
    public var fields: [RecordField] { get { content.fields } set { content.fields = newValue } }
    /// When a host may fill it without a person choosing (SPEC.md §8.1).
    public var matchMode: MatchMode { get { content.matchMode } set { content.matchMode = newValue } }
    public var name: String { get { content.name } set { content.name = newValue } }
    public var kind: ItemKind { get { content.kind } set { content.kind = newValue } }
    public var tags: [String] { get { content.tags } set { content.tags = newValue } }
    public var otp: String? { get { content.otp } set { content.otp = newValue } }
    public var card: CardMember? { get { content.card } set { content.card = newValue } }
    public var identity: IdentityMember? { get { content.identity } set { content.identity = newValue } }
}

extension Vault {
    // MARK: Reading

    /// Reads and opens one record, checked against the index: a file that was rolled back,
    /// replaced or slipped in from outside is refused even though it decrypts.
    /// - Throws: `.recordNotFound`, `.locked`, or `.corrupt` naming the file.
    public func record(withID id: RecordID) throws(VaultError) -> Record {
        _ = try keys()
        return try readingIndex { index, manifest in
            try checkedRecord(id, ledger: index.ledgerEntry(for: id, in: manifest), keys: keys(), in: index.opened)
        }
    }

    /// The ids of every record file, sorted. Needs no key; names that are not record ids are
    /// reported by `verify`, not here. A shard directory that is a link (or not a directory)
    /// is refused, never listed through.
    public func recordIDs() throws(VaultError) -> [RecordID] {
        try mappingErrors(file: container.recordsDirectory) { try recordIDs(in: openContainer()) }
    }

    package func recordIDs(in opened: OpenContainer) throws -> [RecordID] {
        guard let records = try opened.directoryIfPresent(GroupContainer.recordsName) else { return [] }
        var ids: [RecordID] = []
        for shard in try fileSystem.contents(of: records) where shard.utf8.count == 2 && Hex.decode(shard) != nil {
            ids += try recordIDs(inShard: shard, of: records)
        }
        return ids.sorted()
    }

    /// The record ids of one `records/<xx>` directory (unsorted).
    private func recordIDs(inShard shard: String, of records: Directory) throws -> [RecordID] {
        try fileSystem.contents(of: fileSystem.directory(shard, in: records)).compactMap { name in
            guard let id = try? RecordID(hex: name), GroupContainer.shardName(of: id) == shard else { return nil }
            return id
        }
    }

    /// The records whose ids begin with the byte `group` — one `records/<xx>` directory, about a
    /// 256th of the vault — opened and checked as `allRecords()` does, in id order: what a pass
    /// over a vault too large to hold at once reads at a time (`coffer export` of a million).
    public func records(inGroup group: UInt8) throws(VaultError) -> [Record] {
        _ = try keys()
        return try readingIndex { index, manifest in
            let keys = try keys()
            var ledger: [RecordID: LedgerEntry] = [:]
            for entry in try index.ledger(inSlot: IndexManifest.identitySlots + Int(group), of: manifest) { ledger[entry.recordID] = entry }
            let shard = Hex.encode([group])
            guard let records = try index.opened.directoryIfPresent(GroupContainer.recordsName),
                  try fileSystem.status(shard, in: records) != nil else { return [] }
            let ids = try recordIDs(inShard: shard, of: records).sorted()
            return try concurrentMap(ids.count) { try checkedRecord(ids[$0], ledger: ledger[ids[$0]], keys: keys, in: index.opened) }
        }
    }

    /// The file of record `id` (throws a not-found `StorageError` when it, or its shard
    /// directory, does not exist).
    package func readRecordFile(_ id: RecordID, in opened: OpenContainer) throws(StorageError) -> [UInt8] {
        try fileSystem.readFile(id.hex, in: opened.shard(of: id), limit: RecordEnvelope.maximumFileLength)
    }

    /// Removes record `id`'s file durably; nothing to do when it is already gone.
    func removeRecordFile(_ id: RecordID, in opened: OpenContainer) throws(StorageError) {
        let shard: Directory
        do {
            shard = try opened.shard(of: id)
        } catch where error.isNotFound {
            return
        }
        try fileSystem.removeFile(id.hex, in: shard)
    }

    /// Every record, opened and checked. Stops at the first bad one (`verify` reports them all).
    public func allRecords() throws(VaultError) -> [Record] {
        _ = try keys()
        return try readingIndex { index, manifest in
            let keys = try keys()  // inside: a retry after a rotation reads with the new keys
            let ledger = try wholeLedger(index, manifest)
            return try recordIDs(in: index.opened).map { id in try checkedRecord(id, ledger: ledger[id], keys: keys, in: index.opened) }
        }
    }

    /// Every ledger entry, by record id (256 shard reads: for many records at once).
    func wholeLedger(_ index: IdentityIndex, _ manifest: IndexManifest) throws -> [RecordID: LedgerEntry] {
        var ledger: [RecordID: LedgerEntry] = [:]
        for slot in IndexManifest.identitySlots..<IndexManifest.slotCount {
            for entry in try index.ledger(inSlot: slot, of: manifest) { ledger[entry.recordID] = entry }
        }
        return ledger
    }


    /// Reads record `id` and checks it against its ledger entry (SPEC.md §7.4).
    package func checkedRecord(_ id: RecordID, ledger: LedgerEntry?, keys: VaultKeys, in opened: OpenContainer) throws -> Record {
        let path = container.recordPath(id)
        return try mappingErrors(file: path) {
            let bytes: [UInt8]
            do {
                bytes = try readRecordFile(id, in: opened)
            } catch let error as StorageError where error.isNotFound {
                throw VaultError.recordNotFound(id)
            }
            guard let ledger else {
                throw VaultError.corrupt(file: path, reason: "not in the index (added outside Coffer, or a deleted record put back)")
            }
            guard try ciphertextHash(bytes) == ledger.ciphertextHash else {
                throw VaultError.corrupt(file: path, reason: "does not match the index (rolled back to an older copy, or replaced)")
            }
            let record = try keys.openingWithRecordKey { try RecordSealing.open(bytes, id: id, vaultID: vaultID, key: $0) }
            guard record.revision == ledger.revision else {
                throw VaultError.corrupt(file: path, reason: "revision \(record.revision), the index expects \(ledger.revision)")
            }
            return record
        }
    }

    // MARK: Writing

    /// Seals a new record under a fresh random id.
    /// - Returns: the stored record (revision 1).
    @discardableResult
    public func add(_ draft: RecordDraft) throws(VaultError) -> Record {
        try add([draft])[0]
    }

    /// Adds many records in one transaction and one index commit: all of them or, on an error,
    /// none.
    /// - Parameter drafts: any collection, so that an import can pass its items' drafts lazily:
    ///   a draft is 752 bytes inline, and a million of them copied into an array held 0.75 GB.
    /// - Parameter progress: called with (done, total) while sealing, for a progress line.
    /// - Parameter isInterrupted: asked between the steps of the write (`Interruption`): when it
    ///   answers yes before the index commit, nothing is written and `.interrupted` is thrown;
    ///   once the commit is made, the records are in and the call returns them.
    @discardableResult
    public func add<Drafts: Collection<RecordDraft>>(
        _ drafts: Drafts, progress: ((Int, Int) -> Void)? = nil, isInterrupted: (() -> Bool)? = nil
    ) throws(VaultError) -> [Record] {
        var records: [Record] = []
        records.reserveCapacity(drafts.count)
        _ = try insert(drafts, progress: progress, isInterrupted: isInterrupted) { records.append($0) }
        return records
    }

    /// `add(_:progress:isInterrupted:)` for an import of any size: each record is made, sealed
    /// and let go a batch at a time, and only the new records' ids come back (a record is 776
    /// bytes inline: a million of them held 0.75 GB until the commit).
    @discardableResult
    public func addReturningIdentifiers<Drafts: Collection<RecordDraft>>(
        _ drafts: Drafts, progress: ((Int, Int) -> Void)? = nil, isInterrupted: (() -> Bool)? = nil
    ) throws(VaultError) -> [RecordID] {
        try insert(drafts, progress: progress, isInterrupted: isInterrupted) { _ in }
    }

    /// Both adds: every draft checked before anything is written, then the records made and
    /// sealed `batchLength` at a time (each handed to `each`), then one commit.
    private func insert<Drafts: Collection<RecordDraft>>(
        _ drafts: Drafts, progress: ((Int, Int) -> Void)?, isInterrupted: (() -> Bool)?, each: (Record) -> Void
    ) throws(VaultError) -> [RecordID] {
        let keys = try keys()
        let now = RecordCoding.wholeSeconds(Date())
        var ids: [RecordID] = []
        ids.reserveCapacity(drafts.count)
        for draft in drafts {
            try Self.validate(draft)
            ids.append(try mappingErrors(file: "record id") { try RecordID.random() })
        }
        let batchLength = 4096
        return try writeTransaction { opened throws in
            progress?(0, ids.count)
            var changes: [RecordChange] = []
            changes.reserveCapacity(ids.count)
            var batch: [Record] = []
            // Sealing (JSON, padding, AEAD) is a tenth of a large import: every core shares it.
            func sealBatch() throws {
                let sealed = try concurrentMap(batch.count) { index in try RecordSealing.seal(batch[index], vaultID: vaultID, key: keys.recordKey) }
                for (record, bytes) in zip(batch, sealed) {
                    changes.append(RecordChange(id: record.id, sealed: bytes, revision: 1, entries: Self.indexEntries(of: record)))
                    each(record)
                }
                batch.removeAll(keepingCapacity: true)
                progress?(changes.count, ids.count)
            }
            for (draft, id) in zip(drafts, ids) {
                batch.append(Self.newRecord(draft, id: id, now: now))
                if batch.count == batchLength { try sealBatch() }
            }
            try sealBatch()
            try commit(changes, in: opened, undoAddsOnFailure: true, isInterrupted: isInterrupted)
            return ids
        }
    }

    /// The record `draft` makes, as it is first stored.
    private static func newRecord(_ draft: RecordDraft, id: RecordID, now: Date) -> Record {
        Record(
            id: id, serviceIdentifiers: draft.serviceIdentifiers, user: draft.user, password: draft.password,
            notes: draft.notes, fields: draft.fields, created: draft.created.map(RecordCoding.wholeSeconds) ?? now,
            modified: (draft.modified ?? draft.created).map(RecordCoding.wholeSeconds) ?? now, revision: 1, matchMode: draft.matchMode,
            name: draft.name, kind: draft.kind, tags: draft.tags, otp: draft.otp,
            passwordHistory: Array(draft.passwordHistory.prefix(Record.maximumPasswordHistory)), passkey: draft.passkey,
            secretService: draft.secretService, card: draft.content.card.flatMap { $0.isEmpty ? nil : $0 },
            identity: draft.content.identity.flatMap { $0.isEmpty ? nil : $0 }, passwordReportedUnused: draft.passwordReportedUnused)
    }

    /// Reads a record, lets `change` edit it, and writes it back with revision + 1, all under the
    /// exclusive lock: concurrent updaters never lose each other's changes.
    /// - Warning: `change` should throw `VaultError` (say `.invalidInput`) to refuse an edit; other
    ///   errors are reported as corruption of the record.
    /// - Returns: the stored record.
    @discardableResult
    public func updateRecord(withID id: RecordID, _ change: (inout Record) throws -> Void) throws(VaultError) -> Record {
        let keys = try keys()
        return try writeTransaction { opened throws -> Record in try updateRecord(withID: id, in: opened, keys: keys, change) }
    }

    /// `updateRecord(withID:_:)` inside a transaction the caller holds.
    func updateRecord(withID id: RecordID, in opened: OpenContainer, keys: VaultKeys, _ change: (inout Record) throws -> Void) throws -> Record {
        let index = try identityIndex(opened)
        try recover(index)
        let manifest = try index.readManifest()
        let ledger = try index.ledgerEntry(for: id, in: manifest)
        var record = try checkedRecord(id, ledger: ledger, keys: keys, in: opened)
        let before = record
        try change(&record)
        record.id = id
        record.created = before.created
        record.revision = before.revision + 1
        record.modified = RecordCoding.wholeSeconds(Date())
        // No edit is the one place a secret is lost: the replaced password goes to history.
        if record.password != before.password, !before.password.isEmpty {
            record.passwordHistory.insert(PasswordHistoryEntry(password: before.password, replaced: record.modified), at: 0)
        }
        record.passwordHistory = Array(record.passwordHistory.prefix(Record.maximumPasswordHistory))
        try Self.validate(RecordDraft(ItemContent(record)))
        var previous: [BucketEntry] = []
        for slot in ledger?.identitySlots ?? [] {
            previous += try index.entries(inSlot: Int(slot), of: manifest).filter { $0.recordID == id }
        }
        try commit([RecordChange(
            id: id, sealed: try RecordSealing.seal(record, vaultID: vaultID, key: keys.recordKey),
            revision: record.revision, entries: Self.indexEntries(of: record, previous: previous))], in: opened)
        return record
    }

    /// Deletes a record, and its identities. Works on a corrupt record too (nothing is decrypted).
    /// - Parameter revision: the revision the person saw (a vault page's Delete); when the record
    ///   has another now, nothing is removed and `.editConflict` says so. Nil removes whatever is there.
    /// - Throws: `.recordNotFound` when there is none with this id.
    public func deleteRecord(withID id: RecordID, ifRevision revision: UInt64? = nil) throws(VaultError) {
        _ = try keys()
        try writeTransaction { opened throws in
            let index = try identityIndex(opened)
            let ledger = try index.ledgerEntry(for: id, in: index.readManifest())
            if let revision, let ledger, ledger.revision != revision {
                throw VaultError.editConflict(id, expected: revision, current: ledger.revision)
            }
            let inLedger = ledger != nil
            let shard: Directory? = try { () throws -> Directory? in
                do { return try opened.shard(of: id) } catch let error as StorageError where error.isNotFound { return nil }
            }()
            let onDisk = try shard.map { try fileSystem.status(id.hex, in: $0) != nil } ?? false
            guard inLedger || onDisk else {
                throw VaultError.recordNotFound(id)
            }
            // Its attachments leave with it (a record that cannot be read leaves its files for
            // `verify` to name).
            let attachments = (try? checkedRecord(id, ledger: index.ledgerEntry(for: id, in: index.readManifest()), keys: keys(), in: opened))?.attachments ?? []
            for attachment in attachments { try moveAside(attachment.id, of: id, in: opened) }
            try commit([RecordChange(id: id, sealed: nil, revision: 0, entries: [])], in: opened)
            for attachment in attachments {
                try fileSystem.removeFile(Self.incomingName(id, attachment.id), in: opened.directory(GroupContainer.incomingName))
            }
        }
    }

    // MARK: Internals

    /// Runs `body` under the exclusive lock on the container held open for it, after removing
    /// stale temp files. A directory of the container that is a link (or not a directory) is
    /// refused here, before anything is written.
    package func writeTransaction<Result>(_ body: (OpenContainer) throws -> Result) throws(VaultError) -> Result {
        try mappingErrors(file: container.path) { try exclusiveTransaction(body) }
    }

    /// `writeTransaction` with the body's errors passed through as they are (sync's git errors
    /// are not corruption of the container).
    package func exclusiveTransaction<Result>(_ body: (OpenContainer) throws -> Result) throws -> Result {
        let opened = try openContainer()
        return try fileLock(opened).withLock(.exclusive) {
            // A copy made by rsync or tar of a quiet vault may lack the empty directories.
            for name in [GroupContainer.recordsName, GroupContainer.indexName, GroupContainer.temporaryName] {
                _ = try opened.directory(name, create: true)
            }
            let temporary = try opened.temporary
            for name in try fileSystem.contents(of: temporary) { fileSystem.removeQuietly(name, in: temporary) }
            try settleIncomingAttachments(in: opened)
            return try body(opened)
        }
    }

    static func validate(_ draft: RecordDraft) throws(VaultError) {
        do {
            try ItemRules.check(services: draft.serviceIdentifiers, user: draft.user, tags: draft.tags, otp: draft.otp)
            try ItemRules.check(card: draft.content.card, identity: draft.content.identity, kind: draft.kind)
        } catch { throw .invalidInput(error.reason) }
        if draft.passkey != nil, draft.kind != .login { throw .invalidInput("only a login holds a passkey") }
        if draft.secretService != nil, draft.kind != .secret { throw .invalidInput("only a secret item holds Secret Service attributes") }
    }
}
