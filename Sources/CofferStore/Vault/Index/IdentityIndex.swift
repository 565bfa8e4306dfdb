import CofferFormat
/// The sealed identity index in `<container>/index/` (SPEC.md §7): the manifest, immutable
/// shard files, and the journal of an unfinished transaction.
///
/// Readers take the container's shared lock; every change happens under the exclusive lock and
/// becomes visible in one step, when the new manifest is renamed into place.
package struct IdentityIndex {
    /// The container held open for this operation; every index file is named beneath it.
    package let opened: OpenContainer
    let vaultID: VaultID
    let fileSystem: FileSystem
    let keys: IndexKeys
    /// A long-lived host's bucket payloads (`VaultConfiguration.identityBucketCache`).
    var cache: IdentityBucketCache? = nil
    /// This device's state, where large buckets' parts are kept (`IdentityIndex+Parts`).
    var device: DeviceState? = nil
    /// Shards smaller than this are read whole (`VaultConfiguration.bucketPartsThreshold`; a
    /// 10,000-entry vault's buckets are ~9 KB).
    var partsThreshold = 32 << 10

    package static let manifestName = "manifest"
    package static let journalName = "journal"
    var container: GroupContainer { opened.container }
    // Paths for messages only.
    package var manifestPath: String { container.indexDirectory + "/" + Self.manifestName }
    package var journalPath: String { container.indexDirectory + "/" + Self.journalName }
    package var shardsDirectory: String { container.indexDirectory + "/shards" }
    package func shardPath(_ id: ShardID) -> String { shardsDirectory + "/" + id.hex }

    /// `index/`, or `nil` in a container that has none yet (a records-only copy).
    private func indexDirectory() throws(StorageError) -> Directory? {
        try opened.directoryIfPresent(GroupContainer.indexName)
    }

    /// A file of `index/`, or `nil` when it (or `index/`) does not exist.
    private func readIndexFile(_ name: String, limit: Int) throws(StorageError) -> [UInt8]? {
        guard let directory = try indexDirectory() else { return nil }
        do {
            return try fileSystem.readFile(name, in: directory, limit: limit)
        } catch where error.isNotFound {
            return nil
        }
    }

    package static let maximumManifestLength = SealedEnvelope.headerLength + IndexManifest.plaintextLength + SealedEnvelope.tagLength
    package static let maximumShardLength = 64 << 20
    static let shardBlockSize = 512

    // MARK: Reading

    /// The committed manifest; an empty generation-0 manifest when the index was never written.
    /// - Parameter opened: the manifest last opened, reused when the file holds the same bytes.
    package func readManifest(reusing opened: OpenedManifest? = nil) throws -> IndexManifest {
        guard let bytes = try readIndexFile(Self.manifestName, limit: Self.maximumManifestLength) else { return IndexManifest() }
        if let kept = opened?.manifest(ifFileIs: bytes) { return kept }
        let manifest = try openManifest(bytes)
        opened?.keep(manifest, file: bytes)
        return manifest
    }

    /// A manifest file's layout is its version byte (SPEC.md §7.2), authenticated with the rest.
    private func openManifest(_ bytes: [UInt8]) throws -> IndexManifest {
        let envelope = try SealedEnvelope.decode(bytes, as: .indexManifest)
        let layout = IndexLayout(rawValue: envelope.version) ?? .current  // decode admits versions 1 to 4 only
        return try IndexManifest.decode(plaintext: open(envelope, extra: []), layout: layout)
    }

    var manifestExists: Bool { exists(Self.manifestName) }
    package var journalExists: Bool { exists(Self.journalName) }

    private func exists(_ name: String) -> Bool {
        guard let directory = try? indexDirectory() else { return false }
        return (try? fileSystem.status(name, in: directory)) != nil
    }

    /// The entries of a bucket; with `filter`, only those of the named sites, hosts or names.
    /// - Parameter shards: the shards directory held open, for callers that read many buckets.
    /// - Parameter filedUnder: the filing name (host, item name, attribute) every wanted entry is
    ///   filed under: read from this device's part of a large bucket when it has one.
    package func entries(
        inSlot slot: Int, of manifest: IndexManifest, filter: IndexShardCoding.Filter? = nil, shards: Directory? = nil,
        filedUnder filingName: String? = nil
    ) throws -> [BucketEntry] {
        let payload = try filingName.map { try self.payload(inSlot: slot, part: part(filingName: $0), of: manifest) }
            ?? identityPayload(inSlot: slot, of: manifest, shards: shards)
        guard let payload else { return [] }
        return try IndexShardCoding.decodeBucket(payload, layout: manifest.layout, filter: filter, legacyKey: Self.legacyKey)
    }

    /// The key of a layout-1 entry, which stores only its identifier and the site it was filed
    /// under (kept, so the filing can be checked).
    package static func legacyKey(_ service: CredentialServiceIdentifier, site: String) -> ServiceKey {
        var key = ServiceKey(parsing: service)
        key.site = site
        return key
    }

    /// The decrypted payload of an identity bucket, `nil` for an empty one.
    package func identityPayload(inSlot slot: Int, of manifest: IndexManifest, shards: Directory? = nil) throws -> [UInt8]? {
        guard let id = manifest.shards[slot] else { return nil }
        return try readShard(slot: slot, id: id, in: shards)
    }

    package func ledger(inSlot slot: Int, of manifest: IndexManifest, shards: Directory? = nil) throws -> [LedgerEntry] {
        guard let id = manifest.shards[slot] else { return [] }
        return try IndexShardCoding.decodeLedger(readShard(slot: slot, id: id, in: shards))
    }

    package func ledgerEntry(for recordID: RecordID, in manifest: IndexManifest) throws -> LedgerEntry? {
        let slot = IndexManifest.ledgerSlot(of: recordID)
        guard let payload = try payload(inSlot: slot, part: Self.part(of: recordID), of: manifest) else { return nil }
        return try IndexShardCoding.ledgerEntry(for: recordID, in: payload)
    }

    // MARK: Filing (SPEC.md §7.3)

    /// The first byte of the keyed hash of `name`: keying keeps bucket numbers from revealing
    /// which sites and hosts are stored.
    private func bucketByte(_ name: String) -> Int {
        let digest = (try? BLAKE2b.hash(Array(name.utf8), key: keys.bucketing, length: 16)) ?? [0]
        return Int(digest[0])
    }

    /// The bucket an identity is filed in. Layout 2: the high four bits from its site, the low
    /// four from its host, so a site's identities share a region of 16 buckets and a host's sit
    /// in one of them. Layout 1: the site's byte alone.
    package func identitySlot(for key: ServiceKey, layout: IndexLayout) -> Int {
        switch layout {
        case .sites: bucketByte(key.site)
        case .regions, .items, .details: (bucketByte(key.site) & 0xF0) | (bucketByte(key.filingHost) & 0x0F)
        }
    }

    /// The bucket an item entry is filed in: the byte of its filing name (SPEC.md §7.3), so the
    /// items of one name share a bucket.
    package func itemSlot(filingName: String) -> Int {
        bucketByte(filingName)
    }

    package func slot(for entry: BucketEntry, layout: IndexLayout) -> Int {
        switch entry {
        case .identity(let identity): identitySlot(for: identity.key, layout: layout)
        case .item(let item): itemSlot(filingName: item.filingName)
        case .attribute(let attribute): itemSlot(filingName: attribute.filingName)
        }
    }

    /// Every bucket that may hold an identity of `site`: its region (layout 2) or its bucket (1).
    package func identitySlots(ofSite site: String, layout: IndexLayout) -> [Int] {
        let byte = bucketByte(site)
        switch layout {
        case .sites: return [byte]
        case .regions, .items, .details: return Array((byte & 0xF0)...(byte | 0x0F))
        }
    }

    func readShard(slot: Int, id: ShardID, in shards: Directory? = nil) throws -> [UInt8] {
        let cache = slot < IndexManifest.identitySlots ? self.cache : nil
        if let kept = cache?.payload(slot: slot, shard: id, vaultID: vaultID) { return kept }
        let bytes = try fileSystem.readFile(id.hex, in: shards ?? opened.shards(), limit: Self.maximumShardLength)
        let payload = try open(bytes, as: .indexShard, extra: LittleEndian.bytes(UInt16(slot)) + id.bytes)
        cache?.keep(payload, slot: slot, shard: id, vaultID: vaultID)
        return payload
    }

    /// Every non-empty identity bucket's payload in slot order (or only those of `slots`), each
    /// framed as `u8 slot ‖ u32 LE length ‖ payload`: what a listing of everything parses. The
    /// buckets are read and opened on every core (a third of a 100,000-entry listing's rebuild).
    package func framedBuckets(of manifest: IndexManifest, slots: [Int]? = nil) throws -> [UInt8] {
        let shards = manifest.shards.contains { $0 != nil } ? try opened.shards() : nil  // absent in a new vault
        let wanted = (slots ?? Array(0..<IndexManifest.identitySlots)).filter { manifest.shards[$0] != nil }
        let payloads = try concurrentMap(wanted.count) { try identityPayload(inSlot: wanted[$0], of: manifest, shards: shards) }
        var framed: [UInt8] = []
        framed.reserveCapacity(payloads.reduce(0) { $0 + 5 + ($1?.count ?? 0) })
        for (slot, payload) in zip(wanted, payloads) {
            guard let payload else { continue }
            framed.append(UInt8(slot))
            framed.append(littleEndian: UInt32(payload.count))
            framed += payload
        }
        return framed
    }

    /// BLAKE2b-256 of the manifest file as it is now: names one committed state of the index
    /// exactly (a manifest is sealed under a fresh nonce each time), or `nil` when there is none.
    package func manifestDigest() throws -> [UInt8]? {
        guard let bytes = try readIndexFile(Self.manifestName, limit: Self.maximumManifestLength) else { return nil }
        return try BLAKE2b.hash(bytes, length: 32)
    }

    /// Opens a sealed index file; shard payloads are unpadded.
    private func open(_ bytes: [UInt8], as type: FileType, extra: [UInt8]) throws -> [UInt8] {
        try open(SealedEnvelope.decode(bytes, as: type), extra: extra)
    }

    private func open(_ envelope: SealedEnvelope, extra: [UInt8]) throws -> [UInt8] {
        // Index plaintexts hold names, never keys or passwords: ordinary memory is enough.
        var plaintext = try XChaCha20Poly1305.openUnguarded(
            envelope.ciphertext[...], key: keys.sealing, nonce: envelope.nonce[...],
            associatedData: SealedEnvelope.associatedData(envelope.type, version: envelope.version, vaultID: vaultID) + extra)
        guard envelope.type == .indexShard else { return plaintext }
        let length = try plaintext.withUnsafeBytes { try Padding.unpaddedLengthInVariableTime(of: $0, blockSize: Self.shardBlockSize) }
        plaintext.removeLast(plaintext.count - length)
        return plaintext
    }

    // MARK: Writing (callers hold the exclusive lock)

    func seal(_ plaintext: [UInt8], as type: FileType, version: UInt8 = FileMagic.formatVersion, extra: [UInt8]) throws -> [UInt8] {
        let body = type == .indexShard ? try Padding.pad(plaintext, blockSize: Self.shardBlockSize) : plaintext
        let nonce = try XChaCha20Poly1305.randomNonce()
        let ciphertext = try XChaCha20Poly1305.seal(
            body, key: keys.sealing, nonce: nonce,
            associatedData: SealedEnvelope.associatedData(type, version: version, vaultID: vaultID) + extra)
        return SealedEnvelope(type: type, version: version, nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Writes a shard under a fresh random name. `inPlace` when a journal covers the edit: until
    /// a manifest names it a torn shard is garbage that recovery removes (SPEC.md §3.4).
    /// `durable: false` leaves the flush to the caller.
    func writeShard(_ payload: [UInt8], slot: Int, inPlace: Bool, durable: Bool) throws -> ShardID {
        let id = try ShardID.random()
        let bytes = try seal(payload, as: .indexShard, extra: LittleEndian.bytes(UInt16(slot)) + id.bytes)
        let shards = try opened.shards(create: true)
        if inPlace {
            try fileSystem.writeNewFile(bytes, to: id.hex, in: shards, durable: durable)
        } else {
            try fileSystem.writeAtomically(bytes, to: id.hex, in: shards, via: opened.temporary, durable: durable)
        }
        return id
    }

    /// The commit point of every index change.
    func writeManifest(_ manifest: IndexManifest) throws {
        try fileSystem.writeAtomically(
            seal(manifest.encodedPlaintext(), as: .indexManifest, version: manifest.layout.rawValue, extra: []), to: Self.manifestName,
            in: opened.directory(GroupContainer.indexName, create: true), via: opened.temporary)
    }

    func writeJournal(_ journal: IndexJournal) throws {
        try fileSystem.writeAtomically(
            seal(journal.encoded(), as: .indexJournal, extra: []), to: Self.journalName,
            in: opened.directory(GroupContainer.indexName, create: true), via: opened.temporary)
    }

    func readJournal() throws -> IndexJournal? {
        guard let bytes = try readIndexFile(Self.journalName, limit: Self.maximumShardLength) else { return nil }
        return try IndexJournal.decode(open(bytes, as: .indexJournal, extra: [])) { service, _ in ServiceKey(parsing: service) }
    }

    func removeJournal() throws {
        guard let directory = try indexDirectory() else { return }
        try fileSystem.removeFile(Self.journalName, in: directory)
    }

    /// Deletes shard files the manifest does not name (left by a crash or replaced by a commit).
    func removeUnreferencedShards(keeping manifest: IndexManifest) throws {
        let live = Set(manifest.shards.compactMap { $0?.hex })
        guard let index = try indexDirectory(), let shards = try fileSystem.directoryIfPresent("shards", in: index) else { return }
        for name in try fileSystem.contents(of: shards) where !live.contains(name) {
            fileSystem.removeQuietly(name, in: shards)
        }
    }
}

/// BLAKE2b-256 of a record file, as the ledger and the journal store it.
package func ciphertextHash(_ bytes: [UInt8]) throws -> [UInt8] {
    try BLAKE2b.hash(bytes, length: 32)
}

extension IdentityIndex {
    /// The sealed file of ledger shard `id`, as it is (a sync keeps a copy of each ledger shard it
    /// committed, to tell later which records changed since: `SyncBaseline`).
    package func ledgerShardFile(_ id: ShardID) throws -> [UInt8] {
        try fileSystem.readFile(id.hex, in: opened.shards(), limit: Self.maximumShardLength)
    }

    /// The payload of a ledger shard file of `slot` named `id`, authenticated as the index's own.
    package func ledgerPayload(inFile bytes: [UInt8], slot: Int, id: ShardID) throws -> [UInt8] {
        try open(bytes, as: .indexShard, extra: LittleEndian.bytes(UInt16(slot)) + id.bytes)
    }

    /// The payload of ledger slot `slot` now, `nil` when it is empty.
    package func ledgerPayload(inSlot slot: Int, of manifest: IndexManifest) throws -> [UInt8]? {
        try manifest.shards[slot].map { try readShard(slot: slot, id: $0) }
    }
}
