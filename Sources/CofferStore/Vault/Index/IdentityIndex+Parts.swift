import CofferFormat
/// Bucket parts (SPEC.md §7.6): a large index shard, split on this device into 16 sealed parts
/// by a second byte of the same keyed hash that chose its slot, so a lookup of one host, one
/// name, one attribute or one record reads and decrypts 1/16 of the bucket. A bucket holds 1/256
/// of a vault's entries whatever its size (7,800 at 1,000,000 logins, 860 KB); without parts a
/// fill's cost grew with the vault.
///
/// Parts are derived data of the device, like the listing snapshot: cut from a shard payload
/// that was opened and parsed whole, bound by their associated data to the slot, the shard id
/// the manifest names and the part, so a part can only ever answer for the very shard it came
/// from (shards are never rewritten). Each part is itself a bucket (or ledger) payload in
/// canonical order and is parsed with the same checks as a shard: no guarantee is weaker.
/// Written only where the identity store is enabled; any failure means "read the shard".
extension IdentityIndex {
    static let partCount = 16
    static let partsVersion: UInt8 = 1
    /// `COFFER`, 'P', version, shard id, 16 part lengths.
    static let partsHeaderLength = FileMagic.length + identifierByteCount + 4 * partCount

    /// The part of an entry filed under `filingName`: the low four bits of the second byte of
    /// the keyed hash whose first byte chose the slot.
    package func part(filingName: String) -> Int {
        let digest = (try? BLAKE2b.hash(Array(filingName.utf8), key: keys.bucketing, length: 16)) ?? [0, 0]
        return Int(digest[1] & 0x0F)
    }

    /// The part of a record's ledger entry: the low four bits of its id's second byte.
    static func part(of recordID: RecordID) -> Int { Int(recordID.bytes[1] & 0x0F) }

    func part(of entry: BucketEntry) -> Int {
        switch entry {
        case .identity(let identity): part(filingName: identity.key.filingHost)
        case .item(let item): part(filingName: item.filingName)
        case .attribute(let attribute): part(filingName: attribute.filingName)
        }
    }

    /// The payload of `slot` narrowed to part `part` when this device holds the shard's parts,
    /// else the whole payload (a superset: callers filter as they would anyway), after cutting
    /// parts of a large shard for the next lookup.
    package func payload(inSlot slot: Int, part: Int, of manifest: IndexManifest) throws -> [UInt8]? {
        guard let shard = manifest.shards[slot] else { return nil }
        guard manifest.layout.hasItemEntries, let device else { return try readShard(slot: slot, id: shard) }
        if let file = device.bucketParts(slot: slot), let payload = try? openPart(part, of: file, slot: slot, shard: shard) {
            return payload
        }
        let whole = try readShard(slot: slot, id: shard)
        if whole.count >= partsThreshold, device.providerSetting() == .enabled,
           let parts = try? cutParts(of: whole, slot: slot, shard: shard, layout: manifest.layout) {
            device.saveBucketParts(parts, slot: slot)
        }
        return whole
    }

    private func partsAssociatedData(slot: Int, shard: ShardID, part: Int) -> [UInt8] {
        SealedEnvelope.associatedData(.bucketParts, version: Self.partsVersion, vaultID: vaultID)
            + LittleEndian.bytes(UInt16(slot)) + shard.bytes + [UInt8(part)]
    }

    private func openPart(_ part: Int, of file: OpenedFile, slot: Int, shard: ShardID) throws -> [UInt8]? {
        guard let header = file.read(at: 0, count: Self.partsHeaderLength),
              try FileMagic.check(header, is: .bucketParts) == Self.partsVersion,
              Array(header[FileMagic.length..<(FileMagic.length + identifierByteCount)]) == shard.bytes
        else { return nil }
        let lengths = (0..<Self.partCount).map {
            Int(LittleEndian.read(UInt32.self, from: header, at: FileMagic.length + identifierByteCount + 4 * $0))
        }
        let offset = Self.partsHeaderLength + lengths[..<part].reduce(0, +)
        guard lengths[part] >= XChaCha20Poly1305.nonceLength, let sealed = file.read(at: offset, count: lengths[part]) else { return nil }
        return try XChaCha20Poly1305.openUnguarded(
            sealed[XChaCha20Poly1305.nonceLength...], key: keys.sealing, nonce: sealed[..<XChaCha20Poly1305.nonceLength],
            associatedData: partsAssociatedData(slot: slot, shard: shard, part: part))
    }

    /// The parts file of a shard payload: every entry parsed (with every check a shard gets),
    /// grouped by part and re-encoded in canonical order, each part sealed on its own.
    func cutParts(of payload: [UInt8], slot: Int, shard: ShardID, layout: IndexLayout) throws -> [UInt8] {
        var groups = [[UInt8]](repeating: [], count: Self.partCount)
        if slot >= IndexManifest.identitySlots {
            var ledgers = [[LedgerEntry]](repeating: [], count: Self.partCount)
            for entry in try IndexShardCoding.decodeLedger(payload) { ledgers[Self.part(of: entry.recordID)].append(entry) }
            groups = ledgers.map { IndexShardCoding.encode(ledger: $0) }
        } else {
            var buckets = [[BucketEntry]](repeating: [], count: Self.partCount)
            for entry in try IndexShardCoding.decodeBucket(payload, layout: layout) { buckets[part(of: entry)].append(entry) }
            groups = buckets.map { IndexShardCoding.encode($0, layout: layout) }
        }
        var sealedParts: [[UInt8]] = []
        for (part, plaintext) in groups.enumerated() {
            let nonce = try XChaCha20Poly1305.randomNonce()
            sealedParts.append(nonce + (try XChaCha20Poly1305.seal(
                plaintext, key: keys.sealing, nonce: nonce, associatedData: partsAssociatedData(slot: slot, shard: shard, part: part))))
        }
        var file = FileMagic.bytes(for: .bucketParts, version: Self.partsVersion) + shard.bytes
        for sealed in sealedParts { file.append(littleEndian: UInt32(sealed.count)) }
        for sealed in sealedParts { file += sealed }
        return file
    }
}
