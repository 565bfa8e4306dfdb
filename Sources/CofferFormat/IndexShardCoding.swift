import CofferModel
import CofferSupport
/// Binary payloads of index shards (SPEC.md §7.3, §7.4): entries sorted canonically, strings
/// u16-length-prefixed. Identity buckets are in `BucketCoding.swift`; the ledger is here.
public enum IndexShardCoding {
    static let hashLength = 32
    /// Payload kinds (the first byte): identities as format 0.x wrote them (layout 1), the
    /// ledger, identities with their parsed service (layout 2), and identities with names,
    /// one-time-code identities and item entries (layout 3), and the same with each identity's
    /// and item entry's date and tags (layout 4; SPEC.md §7.3, §7.4).
    static let legacyIdentityKind: UInt8 = 0
    static let ledgerKind: UInt8 = 1
    static let regionIdentityKind: UInt8 = 2
    static let identityKind: UInt8 = 3
    static let detailedIdentityKind: UInt8 = 4

    public static func encode(ledger: [LedgerEntry]) -> [UInt8] {
        var bytes: [UInt8] = [ledgerKind]
        bytes.append(littleEndian: UInt32(ledger.count))
        for entry in ledger.sorted(by: { $0.recordID < $1.recordID }) {
            bytes += entry.recordID.bytes
            bytes.append(littleEndian: entry.revision)
            bytes += entry.ciphertextHash
            bytes.append(UInt8(entry.identitySlots.count))
            bytes += entry.identitySlots
        }
        return bytes
    }

    /// The entry of one record, found by scanning without materialising the others.
    public static func ledgerEntry(for id: RecordID, in bytes: [UInt8]) throws(FormatError) -> LedgerEntry? {
        var reader = ByteReader(bytes)
        guard try reader.integer(UInt8.self) == ledgerKind else { throw .nonCanonical("not a ledger shard") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= bytes.count / 57 else { throw .badLength }
        for _ in 0..<count {
            let idBytes = try reader.take(identifierByteCount)
            let revision = try reader.integer(UInt64.self)
            let hash = try reader.take(hashLength)
            let slots = try reader.take(Int(try reader.integer(UInt8.self)))
            if (try? RecordID(bytes: idBytes)) == id {
                return LedgerEntry(recordID: id, revision: revision, ciphertextHash: Array(hash), identitySlots: Array(slots))
            }
        }
        return nil
    }

    /// Each entry's record id and where its file hash lies in `bytes`, in the shard's order —
    /// what a sync compares with the shard it committed (SPEC.md §15.4), without an allocation
    /// per entry. Throws unless the ids ascend, as §7.4 requires.
    public static func ledgerHashes(_ bytes: [UInt8]) throws(FormatError) -> [(id: RecordID, hash: Int)] {
        var reader = ByteReader(bytes)
        guard try reader.integer(UInt8.self) == ledgerKind else { throw .nonCanonical("not a ledger shard") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= bytes.count / 57 else { throw .badLength }
        var entries: [(id: RecordID, hash: Int)] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let id = try RecordID(bytes: try reader.take(identifierByteCount))
            guard entries.last.map({ $0.id < id }) ?? true else { throw .nonCanonical("ledger entries out of order") }
            _ = try reader.integer(UInt64.self)
            entries.append((id, reader.offset))
            _ = try reader.take(hashLength)
            _ = try reader.take(Int(try reader.integer(UInt8.self)))
        }
        guard reader.isAtEnd else { throw .badLength }
        return entries
    }

    public static func decodeLedger(_ bytes: [UInt8]) throws(FormatError) -> [LedgerEntry] {
        var reader = ByteReader(bytes)
        guard try reader.integer(UInt8.self) == ledgerKind else { throw .nonCanonical("not a ledger shard") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= bytes.count / 57 else { throw .badLength }
        var entries: [LedgerEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let id = try RecordID(bytes: try reader.take(identifierByteCount))
            let revision = try reader.integer(UInt64.self)
            let hash = Array(try reader.take(hashLength))
            let slotCount = Int(try reader.integer(UInt8.self))
            entries.append(LedgerEntry(recordID: id, revision: revision, ciphertextHash: hash, identitySlots: Array(try reader.take(slotCount))))
        }
        guard reader.isAtEnd else { throw .badLength }
        return entries
    }
}
