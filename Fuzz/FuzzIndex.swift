// libFuzzer target: every index parser (manifest plaintext, identity bucket, ledger shard,
// single-entry ledger scan, journal, a listing snapshot's framed buckets) is fed the same
// bytes; none may crash, decoded shards re-encode canonically, and a bucket lists as many
// identities as it decodes to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndex(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let manifest = try? IndexManifest.decode(plaintext: bytes, layout: .regions) {
        precondition(manifest.encodedPlaintext() == bytes)
    }
    if let identities = try? IndexShardCoding.decodeIdentities(bytes) {
        let encoded = bytes.first == 0 ? IndexShardCoding.encodeLegacy(identities: identities) : IndexShardCoding.encode(identities: identities)
        precondition(encoded == bytes)
        _ = try? IndexShardCoding.decodeIdentities(bytes, filter: .sites(["example.com"]))
        _ = try? IndexShardCoding.decodeIdentities(bytes, filter: .hosts(["www.example.com"]))
        let framed = [0] + LittleEndian.bytes(UInt32(bytes.count)) + bytes  // slot 0 (SPEC.md §7.6)
        precondition((try? IdentityListing(framedBuckets: framed, usage: UsageLog(entries: [])))?.count == identities.count)
    }
    if let listing = try? IdentityListing(framedBuckets: bytes, usage: UsageLog(entries: [])) {
        for row in listing.rows { _ = listing.identity(row) }
    }
    if let ledger = try? IndexShardCoding.decodeLedger(bytes) {
        precondition(IndexShardCoding.encode(ledger: ledger).count == bytes.count)
        if let first = ledger.first { precondition((try? IndexShardCoding.ledgerEntry(for: first.recordID, in: bytes)) != nil) }
    }
    _ = try? IndexJournal.decode(bytes)
    _ = try? SealedEnvelope.decode(bytes, as: .indexShard)
    return 0
}
