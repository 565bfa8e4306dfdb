import Foundation

/// What a caller supplies to add a credential; the vault assigns id, dates and revision.
public struct RecordDraft: Sendable {
    public var serviceIdentifiers: [CredentialServiceIdentifier]
    public var user: String
    public var password: String
    public var notes: String
    public var fields: [String: String]

    public init(
        serviceIdentifiers: [CredentialServiceIdentifier], user: String, password: String,
        notes: String = "", fields: [String: String] = [:]
    ) {
        self.serviceIdentifiers = serviceIdentifiers
        self.user = user
        self.password = password
        self.notes = notes
        self.fields = fields
    }
}

extension Vault {
    // MARK: Reading

    /// Reads and opens one record.
    /// - Throws: `.recordNotFound`, `.locked`, or `.corrupt` naming the file.
    public func record(withID id: RecordID) throws(VaultError) -> Record {
        let keys = try keys()
        let path = container.recordPath(id)
        return try mappingErrors(file: path) {
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readFile(path, limit: RecordEnvelope.maximumFileLength)
            } catch let error as StorageError where error.isNotFound {
                throw VaultError.recordNotFound(id)
            }
            return try RecordSealing.open(bytes, id: id, vaultID: vaultID, key: keys.recordKey)
        }
    }

    /// The ids of every record file, sorted. Needs no key; names that are not record ids are
    /// reported by `verify`, not here.
    public func recordIDs() throws(VaultError) -> [RecordID] {
        try mappingErrors(file: container.recordsDirectory) {
            var ids: [RecordID] = []
            for shard in try fileSystem.contentsOfDirectory(container.recordsDirectory) {
                for name in try fileSystem.contentsOfDirectory(container.recordsDirectory + "/" + shard) {
                    if let id = try? RecordID(hex: name), Hex.encode(id.bytes.prefix(1)) == shard { ids.append(id) }
                }
            }
            return ids.sorted()
        }
    }

    /// Every record, opened. Stops at the first corrupt one (use `verify` to see them all).
    public func allRecords() throws(VaultError) -> [Record] {
        _ = try keys()
        var records: [Record] = []
        for id in try recordIDs() { records.append(try record(withID: id)) }
        return records
    }

    // MARK: Writing

    /// Seals a new record under a fresh random id.
    /// - Returns: the stored record (revision 1).
    @discardableResult
    public func add(_ draft: RecordDraft) throws(VaultError) -> Record {
        try add([draft])[0]
    }

    /// Adds many records in one locked transaction (the import path).
    @discardableResult
    public func add(_ drafts: [RecordDraft]) throws(VaultError) -> [Record] {
        let keys = try keys()
        let now = RecordCoding.wholeSeconds(Date())
        var records: [Record] = []
        for draft in drafts {
            try Self.validate(draft)
            let id = try mappingErrors(file: "record id") { try RecordID.random() }
            records.append(Record(
                id: id, serviceIdentifiers: draft.serviceIdentifiers, user: draft.user, password: draft.password,
                notes: draft.notes, fields: draft.fields, created: now, modified: now, revision: 1))
        }
        try writeTransaction { () throws in
            var written: [RecordID] = []
            do {
                for record in records {
                    try write(record, keys: keys)
                    written.append(record.id)
                }
            } catch {
                // All or nothing: take back what this call wrote before failing.
                for id in written { fileSystem.removeQuietly(container.recordPath(id)) }
                throw error
            }
        }
        return records
    }

    /// Reads a record, lets `change` edit it, and writes it back with revision + 1, all under the
    /// exclusive lock: concurrent updaters never lose each other's changes.
    /// - Returns: the stored record.
    @discardableResult
    public func updateRecord(withID id: RecordID, _ change: (inout Record) throws -> Void) throws(VaultError) -> Record {
        let keys = try keys()
        return try writeTransaction { () throws -> Record in
            var record = try self.record(withID: id)
            let (created, revision) = (record.created, record.revision)
            try change(&record)
            record.id = id
            record.created = created
            record.revision = revision + 1
            record.modified = RecordCoding.wholeSeconds(Date())
            try Self.validate(RecordDraft(
                serviceIdentifiers: record.serviceIdentifiers, user: record.user, password: record.password))
            try write(record, keys: keys)
            return record
        }
    }

    /// Deletes a record.
    /// - Throws: `.recordNotFound` when there is none with this id.
    public func deleteRecord(withID id: RecordID) throws(VaultError) {
        _ = try keys()
        try writeTransaction { () throws in
            guard try fileSystem.status(container.recordPath(id)) != nil else { throw VaultError.recordNotFound(id) }
            try fileSystem.removeFile(container.recordPath(id))
        }
    }

    // MARK: Internals

    /// Runs `body` under the exclusive lock, after removing stale temp files.
    func writeTransaction<Result>(_ body: () throws -> Result) throws(VaultError) -> Result {
        try mappingErrors(file: container.path) {
            try fileLock.withLock(.exclusive) {
                for name in try fileSystem.contentsOfDirectory(container.temporaryDirectory) {
                    fileSystem.removeQuietly(container.temporaryDirectory + "/" + name)
                }
                return try body()
            }
        }
    }

    func write(_ record: Record, keys: VaultKeys) throws {
        let bytes = try RecordSealing.seal(record, vaultID: vaultID, key: keys.recordKey)
        try fileSystem.makeDirectory(container.shardDirectory(of: record.id))
        try fileSystem.writeAtomically(
            bytes, to: container.recordPath(record.id), temporaryDirectory: container.temporaryDirectory)
    }

    static func validate(_ draft: RecordDraft) throws(VaultError) {
        guard !draft.serviceIdentifiers.isEmpty else { throw .invalidInput("a credential needs at least one service") }
        for service in draft.serviceIdentifiers {
            guard !service.identifier.isEmpty, service.identifier.utf8.count <= 2048,
                  !service.identifier.utf8.contains(0)
            else { throw .invalidInput("invalid service identifier") }
        }
    }
}
