import CofferStore

/// A derived table's bytes (SPEC.md §7.6) being written into one buffer and cut into chunks of
/// about `chunkLength` bytes: a row or line is appended to `table`, then `ended(key:)` says so.
struct ChunkWriter {
    let chunkLength: Int
    var table: [UInt8] = []
    private var parts: [SnapshotPart] = []
    private var chunkStart = 0, count = 0, firstKey: [UInt8] = []

    init(chunkLength: Int) { self.chunkLength = chunkLength }

    /// One row or line more is in `table`; `key` is its sort key (a chunk's first one goes in
    /// the header).
    mutating func ended(key: @autoclosure () -> [UInt8]) {
        if count == 0 { firstKey = key() }
        count += 1
        if table.count - chunkStart >= chunkLength { cut() }
    }

    private mutating func cut() {
        guard count > 0 else { return }
        parts.append(.plain(chunkStart..<table.count, count: count, key: firstKey))
        chunkStart = table.count
        count = 0
    }

    /// The chunks written since the last call, the last one cut where it is.
    mutating func cutChunks() -> [SnapshotPart] {
        cut()
        defer { parts = [] }
        return parts
    }

    mutating func finished() -> (table: [UInt8], parts: [SnapshotPart]) {
        let parts = cutChunks()
        return (table, parts)
    }
}
