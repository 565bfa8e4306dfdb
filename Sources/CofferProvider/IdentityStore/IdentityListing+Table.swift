import CofferStore
import CofferFormat
/// The listing table (SPEC.md §7.6): a whole listing's rows in service order, as the device's
/// listing snapshot keeps them in chunks, so `coffer list` of a million identities is one read,
/// a decryption on every core and one pass — no bucket parsing, no sort.
///
/// Each row is `slot u8 ‖ record id (16) ‖ entry u8 ‖ kind u8 ‖ type u8 ‖ mode u8 ‖ rank i64 LE ‖
/// identifier ‖ user ‖ name ‖ modified i64 LE ‖ tags` (strings `u16 LE length ‖ UTF-8`; `tags`
/// the entry's stored tag list as one such string); a chunk is whole rows. Only what a listing
/// shows is kept: the stored keys a lookup matches on stay in the buckets.
extension IdentityListing {
    /// The smallest row: slot, id, four bytes, rank, three empty strings, modified and no tags.
    static let minimumRowLength = 1 + identifierByteCount + 4 + 8 + 3 * 2 + 8 + 2
    /// Appends `row` (whose strings are in `text`) to `table`.
    static func encode(_ row: Row, in text: UnsafeBufferPointer<UInt8>, to table: inout [UInt8]) {
        table.append(row.slot)
        table.append(bigEndian: row.recordID.words.high)  // the id's 16 bytes, as `RecordID.bytes` (without its array)
        table.append(bigEndian: row.recordID.words.low)
        table.append(row.entry.tableByte)
        table.append(row.kind.indexByte)
        table.append(row.type == .URL ? 1 : 0)
        table.append(row.mode.indexByte)
        table.append(littleEndian: row.rank)
        func append(_ string: Range<Int>) {  // three calls, not an array of three ranges per row
            table.append(littleEndian: UInt16(string.count))  // bucket strings are u16-prefixed too
            table.append(contentsOf: UnsafeBufferPointer(rebasing: text[string]))
        }
        append(row.identifier)
        append(row.user)
        append(row.name)
        table.append(littleEndian: row.modified)
        append(row.tags)
    }

    /// Whether `encode` writes the same bytes for `a` (in `textA`) as for `b` (in `textB`),
    /// compared field by field: the same fields, without writing them.
    static func sameContent(_ a: Row, in textA: UnsafeBufferPointer<UInt8>, _ b: Row, in textB: UnsafeBufferPointer<UInt8>) -> Bool {
        func equal(_ x: Range<Int>, _ y: Range<Int>) -> Bool {
            UnsafeBufferPointer(rebasing: textA[x]).hasSameBytes(as: UnsafeBufferPointer(rebasing: textB[y]))
        }
        return a.slot == b.slot && a.recordID == b.recordID && a.entry == b.entry && a.kind == b.kind && (a.type == .URL) == (b.type == .URL)
            && a.mode == b.mode && a.rank == b.rank && a.modified == b.modified
            && equal(a.identifier, b.identifier) && equal(a.user, b.user) && equal(a.name, b.name) && equal(a.tags, b.tags)
    }

    /// A hash of the fixed fields of what `encode` writes for `row` and of its strings' lengths:
    /// rows of the same content hash alike (`sameContent`), and rows that differ almost always
    /// differ here too (a string's bytes alone: one record's identities, compared on a match).
    /// Hashing the strings' bytes as well took half the time of bringing a million-row snapshot
    /// up to date. Seeded per process, as every `Hasher`.
    static func contentHash(of row: Row) -> Int {
        var hasher = Hasher()
        hasher.combine(row.recordID.words.high)
        hasher.combine(row.recordID.words.low)
        hasher.combine(row.modified)
        hasher.combine(row.rank)
        hasher.combine(UInt64(row.slot) | UInt64(row.entry.tableByte) << 8 | UInt64(row.kind.indexByte) << 16 | UInt64(row.mode.indexByte) << 24
            | UInt64(row.identifier.count) << 32)
        hasher.combine(UInt64(row.user.count) | UInt64(row.name.count) << 16 | UInt64(row.tags.count) << 32)
        return hasher.finalize()
    }

    /// How many bytes `encode` writes for `row`.
    static func encodedLength(of row: Row) -> Int {
        minimumRowLength + row.identifier.count + row.user.count + row.name.count + row.tags.count
    }

    /// The rows of `bytes[range]` (whole rows, as a chunk holds them), pointing into `bytes`.
    /// - Throws: `FormatError` for any length or byte the table's layout does not allow.
    static func rows(of bytes: UnsafeRawBufferPointer, in range: Range<Int>, count: Int, usage: UsageLog) throws(FormatError) -> [Row] {
        guard count <= range.count / minimumRowLength else { throw .badLength }
        var offset = range.lowerBound
        var rows: [Row] = []
        rows.reserveCapacity(count)
        for _ in 0..<count { rows.append(try row(of: bytes, at: &offset, end: range.upperBound, usage: usage)) }
        guard offset == range.upperBound else { throw .badLength }
        return rows
    }

    /// One row at `offset`, moving it past the row. Plain loads from one raw buffer: a million
    /// rows read through a generic reader from another module spent a fifth of `coffer list`
    /// in runtime metadata lookups.
    static func row(of raw: UnsafeRawBufferPointer, at offset: inout Int, end: Int, usage: UsageLog) throws(FormatError) -> Row {
        guard end - offset >= minimumRowLength - 16 else { throw .badLength }
        let slot = raw[offset]
        let id = RecordID(words: IdentifierWords(
            high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self)),
            low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 9, as: UInt64.self))))
        offset += 1 + identifierByteCount
        let entryByte = raw[offset], kindByte = raw[offset + 1], typeByte = raw[offset + 2], modeByte = raw[offset + 3]
        guard let entry = Entry(tableByte: entryByte), let kind = ItemKind(indexByte: kindByte), typeByte <= 1,
              let mode = MatchMode(indexByte: modeByte)
        else { throw .nonCanonical("listing table row") }
        let rank = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: Int64.self))
        offset += 12
        func text() throws(FormatError) -> (Int32, Int32) {
            guard end - offset >= 2 else { throw .badLength }
            let count = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            offset += 2
            guard end - offset >= count else { throw .badLength }
            defer { offset += count }
            return (Int32(offset), Int32(offset + count))
        }
        let identifier = try text(), user = try text(), name = try text()
        guard end - offset >= 8 else { throw .badLength }
        let modified = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
        offset += 8
        let tags = try text()
        try checkTagList(raw, tags)
        return Row(
            recordID: id, entry: entry, kind: kind, rank: rank, lastUsed: usage.lastUsed(id), type: typeByte == 1 ? .URL : .domain,
            mode: mode, level: nil, requestIndex: 0, identifierBounds: identifier, userBounds: user, nameBounds: name,
            modified: modified, tagsBounds: tags, slot: slot)
    }

    /// Checks that a row's tag list is empty or whole — `count u8 ‖ count × (u16 LE length ‖
    /// bytes)` filling it exactly — so `IndexShardCoding.tagRanges` never reads past it.
    private static func checkTagList(_ raw: UnsafeRawBufferPointer, _ bounds: (Int32, Int32)) throws(FormatError) {
        let (start, end) = (Int(bounds.0), Int(bounds.1))
        guard start < end else { return }
        var offset = start + 1
        for _ in 0..<Int(raw[start]) {
            guard end - offset >= 2 else { throw .badLength }
            offset += 2 + Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            guard offset <= end else { throw .badLength }
        }
        guard offset == end else { throw .badLength }
    }

    /// The listing of a snapshot's chunks (`plaintexts` in `bytes`, holding `counts` rows
    /// each), in service order, parsed on every core straight into one array; rows point into
    /// `bytes`.
    /// - Parameter spareRows: room for this many rows more (a merge inserts them in place).
    init(snapshot bytes: [UInt8], plaintexts: [Range<Int>], counts: [Int], usage: UsageLog, spareRows: Int = 0) throws {
        guard bytes.count <= Int32.max, plaintexts.count == counts.count else { throw FormatError.badLength }
        for (range, count) in zip(plaintexts, counts) where count > range.count / Self.minimumRowLength { throw FormatError.badLength }
        let starts = counts.reduce(into: [0]) { $0.append($0.last! + $1) }
        let total = starts.last!
        var failure: (any Error)?
        let rows = [Row](unsafeUninitializedCapacity: total + spareRows) { buffer, initialized in
            let base = UnsafeSendableRows(buffer.baseAddress)
            do {
                _ = try bytes.withUnsafeBytes { raw in
                    try concurrentMap(plaintexts.count) { index in
                        var offset = plaintexts[index].lowerBound
                        for position in starts[index]..<starts[index + 1] {
                            let row = try Self.row(of: raw, at: &offset, end: plaintexts[index].upperBound, usage: usage)
                            (base.pointer! + position).initialize(to: row)
                        }
                        guard offset == plaintexts[index].upperBound else { throw FormatError.badLength }
                    }
                }
                initialized = total
            } catch {
                failure = error
                initialized = 0  // Row is trivial: nothing to deinitialize
            }
        }
        if let failure { throw failure }
        self.init(text: bytes, rows: rows, order: .service)
    }

    /// The rows (already in service order) as a table cut in chunks of about `chunkLength` bytes.
    func tableParts(chunkLength: Int) -> (table: [UInt8], parts: [SnapshotPart]) {
        var writer = ChunkWriter(chunkLength: chunkLength)
        writer.table.reserveCapacity(rows.reduce(0) { $0 + Self.encodedLength(of: $1) })  // grown by doubling, 60 MB at a million rows was copied some 26 times on its way
        withUnsafeText { text in
            for row in rows { writer.append(row, in: text) }
        }
        return writer.finished()
    }

    /// Whether `a` (in `textA`) comes before `b` (in `textB`) in service order
    /// (`sortedByService`): first column, user, record id, kind of row.
    static func servicePrecedes(_ a: Row, in textA: UnsafeBufferPointer<UInt8>, _ b: Row, in textB: UnsafeBufferPointer<UInt8>) -> Bool {
        func bytes(_ range: Range<Int>, _ text: UnsafeBufferPointer<UInt8>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: text[range]))
        }
        let byFirst = bytes(firstColumn(of: a, in: textA), textA).lexicographicOrder(bytes(firstColumn(of: b, in: textB), textB))
        if byFirst != 0 { return byFirst < 0 }
        let byUser = bytes(a.user, textA).lexicographicOrder(bytes(b.user, textB))
        if byUser != 0 { return byUser < 0 }
        return a.recordID != b.recordID ? a.recordID < b.recordID : a.entry.tableByte < b.entry.tableByte
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

extension ChunkWriter {
    /// Appends `row` (whose strings are in `text`) as a listing table row.
    mutating func append(_ row: IdentityListing.Row, in text: UnsafeBufferPointer<UInt8>) {
        IdentityListing.encode(row, in: text, to: &table)
        ended(key: [])
    }
}

/// The rows being filled by the workers of `concurrentMap`, each at its own positions.
private struct UnsafeSendableRows: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<IdentityListing.Row>?
    init(_ pointer: UnsafeMutablePointer<IdentityListing.Row>?) { self.pointer = pointer }
}
