/// The sealed identity index in `<container>/index/` (SPEC.md §6): the manifest, immutable
/// shard files, and the journal of an unfinished transaction.
///
/// Readers take the container's shared lock; every change happens under the exclusive lock and
/// becomes visible in one step, when the new manifest is renamed into place.
struct IdentityIndex {
    let container: GroupContainer
    let vaultID: VaultID
    let fileSystem: FileSystem
    let keys: IndexKeys

    var directory: String { container.indexDirectory }
    var manifestPath: String { directory + "/manifest" }
    var journalPath: String { directory + "/journal" }
    var shardsDirectory: String { directory + "/shards" }
    func shardPath(_ id: ShardID) -> String { shardsDirectory + "/" + id.hex }

    static let maximumManifestLength = SealedEnvelope.headerLength + IndexManifest.plaintextLength + SealedEnvelope.tagLength
    static let maximumShardLength = 64 << 20
    static let shardBlockSize = 512

    // MARK: Reading

    /// The committed manifest; an empty generation-0 manifest when the index was never written.
    func readManifest() throws -> IndexManifest {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(manifestPath, limit: Self.maximumManifestLength)
        } catch where error.isNotFound {
            return IndexManifest()
        }
        return try IndexManifest.decode(plaintext: open(bytes, as: .indexManifest, extra: []))
    }

    var manifestExists: Bool { (try? fileSystem.status(manifestPath)) != nil }
    var journalExists: Bool { (try? fileSystem.status(journalPath)) != nil }

    /// The entries of a bucket; with `sites`, only those filed under one of them.
    /// - Parameter shards: the shards directory held open, for callers that read many buckets.
    func identities(inSlot slot: Int, of manifest: IndexManifest, sites: [String]? = nil, shards: OpenDirectory? = nil) throws -> [IdentityEntry] {
        guard let payload = try identityPayload(inSlot: slot, of: manifest, shards: shards) else { return [] }
        return try IndexShardCoding.decodeIdentities(payload, sites: sites)
    }

    /// The decrypted payload of an identity bucket, `nil` for an empty one.
    func identityPayload(inSlot slot: Int, of manifest: IndexManifest, shards: OpenDirectory? = nil) throws -> [UInt8]? {
        guard let id = manifest.shards[slot] else { return nil }
        return try readShard(slot: slot, id: id, in: shards)
    }

    func ledger(inSlot slot: Int, of manifest: IndexManifest, shards: OpenDirectory? = nil) throws -> [LedgerEntry] {
        guard let id = manifest.shards[slot] else { return [] }
        return try IndexShardCoding.decodeLedger(readShard(slot: slot, id: id, in: shards))
    }

    func ledgerEntry(for recordID: RecordID, in manifest: IndexManifest) throws -> LedgerEntry? {
        let slot = IndexManifest.ledgerSlot(of: recordID)
        guard let id = manifest.shards[slot] else { return nil }
        return try IndexShardCoding.ledgerEntry(for: recordID, in: readShard(slot: slot, id: id))
    }

    /// The site a service is filed under: its registrable domain, else its lower-cased identifier.
    static func site(of service: CredentialServiceIdentifier) -> String {
        ServiceMatcher.site(of: service) ?? service.identifier.lowercased()
    }

    /// The identity bucket of a site: a keyed hash, so bucket numbers reveal nothing.
    func identitySlot(forSite site: String) -> Int {
        let digest = (try? BLAKE2b.hash(Array(site.utf8), key: keys.bucketing, length: 16)) ?? [0]
        return Int(digest[0])
    }

    private func readShard(slot: Int, id: ShardID, in shards: OpenDirectory? = nil) throws -> [UInt8] {
        let bytes = try shards.map { try fileSystem.readFile(named: id.hex, in: $0, limit: Self.maximumShardLength) }
            ?? fileSystem.readFile(shardPath(id), limit: Self.maximumShardLength)
        let padded = try open(bytes, as: .indexShard, extra: LittleEndian.bytes(UInt16(slot)) + id.bytes)
        return padded
    }

    /// Every non-empty identity bucket's payload in slot order, each framed as
    /// `u32 LE length ‖ payload`: the listing snapshot's plaintext (SPEC.md §6.6).
    func framedBuckets(of manifest: IndexManifest) throws -> [UInt8] {
        let shards = try? fileSystem.openDirectory(shardsDirectory)  // absent in a new vault
        var framed: [UInt8] = []
        for slot in 0..<IndexManifest.identitySlots {
            guard let payload = try identityPayload(inSlot: slot, of: manifest, shards: shards) else { continue }
            framed.append(littleEndian: UInt32(payload.count))
            framed += payload
        }
        return framed
    }

    /// BLAKE2b-256 of the manifest file as it is now: names one committed state of the index
    /// exactly (a manifest is sealed under a fresh nonce each time), or `nil` when there is none.
    func manifestDigest() throws -> [UInt8]? {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(manifestPath, limit: Self.maximumManifestLength)
        } catch where error.isNotFound {
            return nil
        }
        return try BLAKE2b.hash(bytes, length: 32)
    }

    // MARK: A device's listing snapshot (SPEC.md §6.6)

    /// Seals framed buckets into one file bound to the manifest they were read under: the
    /// digest is associated data, so a snapshot of any other state fails to open.
    func sealListing(_ framedBuckets: [UInt8], manifestDigest: [UInt8]) throws -> [UInt8] {
        try seal(framedBuckets, as: .identityListing, extra: manifestDigest)
    }

    /// The framed buckets of a snapshot made under the manifest with this digest.
    func openListing(_ bytes: [UInt8], manifestDigest: [UInt8]) throws -> [UInt8] {
        try open(bytes, as: .identityListing, extra: manifestDigest)
    }

    /// Opens a sealed index file; shard payloads are unpadded.
    private func open(_ bytes: [UInt8], as type: FileType, extra: [UInt8]) throws -> [UInt8] {
        let envelope = try SealedEnvelope.decode(bytes, as: type)
        // Index plaintexts hold names, never keys or passwords: ordinary memory is enough.
        var plaintext = try XChaCha20Poly1305.openUnguarded(
            envelope.ciphertext[...], key: keys.sealing, nonce: envelope.nonce[...],
            associatedData: SealedEnvelope.associatedData(type, vaultID: vaultID) + extra)
        guard type == .indexShard else { return plaintext }
        let length = try plaintext.withUnsafeBytes { try Padding.unpaddedLengthInVariableTime(of: $0, blockSize: Self.shardBlockSize) }
        plaintext.removeLast(plaintext.count - length)
        return plaintext
    }

    // MARK: Writing (callers hold the exclusive lock)

    func seal(_ plaintext: [UInt8], as type: FileType, extra: [UInt8]) throws -> [UInt8] {
        let body = type == .indexShard ? try Padding.pad(plaintext, blockSize: Self.shardBlockSize) : plaintext
        let nonce = try XChaCha20Poly1305.randomNonce()
        let ciphertext = try XChaCha20Poly1305.seal(
            body, key: keys.sealing, nonce: nonce, associatedData: SealedEnvelope.associatedData(type, vaultID: vaultID) + extra)
        return SealedEnvelope(type: type, nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Writes a shard under a fresh random name. `inPlace` when a journal covers the edit: until
    /// a manifest names it a torn shard is garbage that recovery removes (SPEC.md §2.4).
    /// `durable: false` leaves the flush to the caller.
    func writeShard(_ payload: [UInt8], slot: Int, inPlace: Bool, durable: Bool) throws -> ShardID {
        let id = try ShardID.random()
        let bytes = try seal(payload, as: .indexShard, extra: LittleEndian.bytes(UInt16(slot)) + id.bytes)
        if inPlace {
            try fileSystem.writeNewFile(bytes, to: shardPath(id), durable: durable)
        } else {
            try fileSystem.writeAtomically(bytes, to: shardPath(id), temporaryDirectory: container.temporaryDirectory, durable: durable)
        }
        return id
    }

    /// The commit point of every index change.
    func writeManifest(_ manifest: IndexManifest) throws {
        try fileSystem.writeAtomically(
            seal(manifest.encodedPlaintext(), as: .indexManifest, extra: []), to: manifestPath,
            temporaryDirectory: container.temporaryDirectory)
    }

    func writeJournal(_ journal: IndexJournal) throws {
        try fileSystem.writeAtomically(
            seal(journal.encoded(), as: .indexJournal, extra: []), to: journalPath, temporaryDirectory: container.temporaryDirectory)
    }

    func readJournal() throws -> IndexJournal? {
        let bytes: [UInt8]
        do {
            bytes = try fileSystem.readFile(journalPath, limit: Self.maximumShardLength)
        } catch where error.isNotFound {
            return nil
        }
        return try IndexJournal.decode(open(bytes, as: .indexJournal, extra: []))
    }

    func removeJournal() throws {
        try fileSystem.removeFile(journalPath)
    }

    /// Deletes shard files the manifest does not name (left by a crash or replaced by a commit).
    func removeUnreferencedShards(keeping manifest: IndexManifest) throws {
        let live = Set(manifest.shards.compactMap { $0?.hex })
        for name in try fileSystem.contentsOfDirectory(shardsDirectory) where !live.contains(name) {
            fileSystem.removeQuietly(shardsDirectory + "/" + name)
        }
    }
}

/// BLAKE2b-256 of a record file, as the ledger and the journal store it.
func ciphertextHash(_ bytes: [UInt8]) throws -> [UInt8] {
    try BLAKE2b.hash(bytes, length: 32)
}
