import CofferStore
import CofferFormat
/// The listing table (SPEC.md §7.6): a whole listing's rows in service order, as the device's
/// listing snapshot keeps them, so `coffer list` of 100,000 identities is one read, one decrypt
/// and one pass — no bucket parsing, no sort.
///
/// `u32 LE n ‖ n rows`, each `record id (16) ‖ entry u8 ‖ kind u8 ‖ type u8 ‖ mode u8 ‖
/// rank i64 LE ‖ identifier ‖ user ‖ name` (strings `u16 LE length ‖ UTF-8`). Only what a listing
/// shows is kept: the stored keys a lookup matches on (site, host, scheme, path) stay in the
/// buckets, which halves the bytes to decrypt.
extension IdentityListing {
    /// Rows in the order a person reads a whole listing (`sortedByService()`), as the table.
    func encodedTable() -> [UInt8] {
        let listing = sortedByService()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + listing.rows.count * 48 + listing.text.count / 2)
        bytes.append(littleEndian: UInt32(listing.rows.count))
        listing.withUnsafeText { text in
            for row in listing.rows {
                bytes += row.recordID.bytes
                bytes.append(row.entry.tableByte)
                bytes.append(row.kind.indexByte)
                bytes.append(row.type == .URL ? 1 : 0)
                bytes.append(row.mode.indexByte)
                bytes.append(littleEndian: row.rank)
                for range in [row.identifier, row.user, row.name] {
                    bytes.append(littleEndian: UInt16(range.count))  // bucket strings are u16-prefixed too
                    bytes += UnsafeBufferPointer(rebasing: text[range])
                }
            }
        }
        return bytes
    }

    /// The rows of the table at `range` of `bytes`, in its (service) order, pointing into
    /// `bytes` itself.
    /// - Throws: `FormatError` for any length or byte the table's layout does not allow.
    init(table bytes: [UInt8], in range: Range<Int>, usage: UsageLog) throws(FormatError) {
        guard bytes.count <= Int32.max, range.count >= 4 else { throw .badLength }
        // Plain loads from one raw buffer: a million rows read through a generic reader from
        // another module spent a fifth of `coffer list` in runtime metadata lookups.
        let parsed = bytes.withUnsafeBytes { raw in Result { () throws(FormatError) -> [Row] in
            var offset = range.lowerBound
            let end = range.upperBound
            func integer<T: FixedWidthInteger>(_: T.Type) throws(FormatError) -> T {
                guard end - offset >= MemoryLayout<T>.size else { throw .badLength }
                defer { offset += MemoryLayout<T>.size }
                return T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            func text() throws(FormatError) -> (Int32, Int32) {
                let count = Int(try integer(UInt16.self))
                guard end - offset >= count else { throw .badLength }
                defer { offset += count }
                return (Int32(offset), Int32(offset + count))
            }
            let count = Int(try integer(UInt32.self))
            guard count <= range.count / 34 else { throw .badLength }  // the smallest row is 34 bytes
            var rows: [Row] = []
            rows.reserveCapacity(count)
            for _ in 0..<count {
                guard end - offset >= identifierByteCount + 12 else { throw .badLength }
                let id = RecordID(words: IdentifierWords(
                    high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                    low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))))
                offset += identifierByteCount
                let entryByte = raw[offset], kindByte = raw[offset + 1], typeByte = raw[offset + 2], modeByte = raw[offset + 3]
                offset += 4
                guard let entry = Entry(tableByte: entryByte), let kind = ItemKind(indexByte: kindByte), typeByte <= 1,
                      let mode = MatchMode(indexByte: modeByte)
                else { throw .nonCanonical("listing table row") }
                let rank = try integer(Int64.self)
                let identifier = try text(), user = try text(), name = try text()
                rows.append(Row(
                    recordID: id, entry: entry, kind: kind, rank: rank, lastUsed: usage.lastUsed(id), type: typeByte == 1 ? .URL : .domain,
                    mode: mode, level: nil, requestIndex: 0, identifierBounds: identifier, userBounds: user, nameBounds: name))
            }
            guard offset == end else { throw .badLength }
            return rows
        } }
        self.init(text: bytes, rows: try parsed.get(), order: .service)
    }
}

extension IdentityListing.Entry {
    /// The row's `entry` byte in the table, also the last tie-break of service order.
    var tableByte: UInt8 {
        switch self {
        case .password: 0
        case .oneTimeCode: 1
        case .passkey: 2
        case .item: 3
        }
    }

    init?(tableByte: UInt8) {
        switch tableByte {
        case 0: self = .password
        case 1: self = .oneTimeCode
        case 2: self = .passkey
        case 3: self = .item
        default: return nil
        }
    }
}
