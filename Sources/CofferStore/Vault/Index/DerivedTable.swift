import CofferFormat

/// One of this device's tables derived from the identity buckets (SPEC.md §7.6): the listing
/// snapshot (`listing`) or the completion table (`completion`), a header file and its chunk
/// files in the device's state directory. Everything here is best effort: a table that cannot
/// be read is no table, and one that cannot be written is built again next time.
package struct DerivedTable {
    package let type: FileType
    let name: String
    package let index: IdentityIndex
    let device: DeviceState

    package init(_ type: FileType, index: IdentityIndex, device: DeviceState) {
        self.type = type
        name = type == .completionTable ? DeviceState.completionTableName : DeviceState.listingName
        self.index = index
        self.device = device
    }

    /// The lock file of a whole build (`listing.lock`, `completion.lock`: no chunk's name,
    /// `<name>-<id>`, is it).
    package var buildLockName: String { name + ".lock" }

    /// Runs `body`, a build of the whole table, as the only one this device is making (SPEC.md
    /// §7.6): a build another process (an import preparing the table, the browser host between
    /// requests, a second `coffer list`, a second Tab) has under way is waited for, and `body`
    /// then finds its table current. Two builders would each read and sort every bucket — at a
    /// million rows seconds and hundreds of MB each — for the same bytes. The lock only saves
    /// work: where it cannot be had (the device directory unwritable, something else in its
    /// place), `body` runs without it, as device state never fails a read.
    package func buildingAlone<Result>(_ body: () throws -> Result) throws -> Result {
        var locked = false
        do {
            return try device.withLock(buildLockName) {
                locked = true
                return try body()
            }
        } catch where !locked {
            return try body()
        }
    }

    /// The table's header, when there is one that opens.
    package func header() -> SnapshotFile? {
        guard let bytes = device.read(name, limit: DeviceState.maximumListingLength) else { return nil }
        return try? index.openSnapshotHeader(bytes, as: type)
    }

    /// The plaintexts of the chunks at `indices`, read and opened on every core, one after
    /// another in one buffer (with room for `spare` bytes more, so that text appended to it
    /// does not copy it).
    /// - Returns: the buffer, and where each chunk's plaintext is in it.
    package func read(_ file: SnapshotFile, _ indices: [Int], spare: Int = 0) throws -> (text: [UInt8], ranges: [Range<Int>]) {
        var ranges: [Range<Int>] = []
        var end = 0
        for index in indices {
            ranges.append(end..<end + file.chunks[index].plaintextLength)
            end += file.chunks[index].plaintextLength
        }
        // Not zeroed first: every byte is a chunk's plaintext, written by the worker that opens it,
        // so the pages are first touched on every core (zeroing a million rows' 94 MB was a
        // tenth of a warm `coffer list`, on one core).
        let text = try [UInt8](unsafeUninitializedCapacity: end + spare) { buffer, initialized in
            let base = UnsafeSendablePointer(UnsafeMutableRawPointer(buffer.baseAddress))
            _ = try concurrentMap(indices.count) { position in
                let chunk = file.chunks[indices[position]]
                guard var bytes = device.read(SnapshotFile.chunkName(name, id: chunk.id), limit: chunk.sealedLength) else {
                    throw FormatError.badLength
                }
                let plaintext = try index.openSnapshotChunk(type, &bytes, chunk)
                guard plaintext.count == ranges[position].count else { throw FormatError.badLength }
                bytes.withUnsafeBytes { source in
                    base.raw?.advanced(by: ranges[position].lowerBound).copyMemory(from: source.baseAddress! + plaintext.lowerBound, byteCount: plaintext.count)
                }
            }
            initialized = end
        }
        return (text, ranges)
    }

    /// Replaces the table with one made from the buckets of `manifest`: the `plain` parts of
    /// `table` sealed and written as new chunk files (on every core), the `kept` ones left as
    /// they are, then the header, then the chunk files of `replaced` (the header this one
    /// replaces) that the new one does not name — or, replacing no header, every chunk file it
    /// does not name. A crash leaves the old header (whose chunks are all still there) or the
    /// new one; two readers bringing one table up to date at once (both under the shared lock)
    /// each remove only what the header they read named, never the other's new chunks.
    package func write(_ manifest: IndexManifest, table: [UInt8], parts: [SnapshotPart], replacing replaced: SnapshotFile? = nil) throws {
        let chunks = try table.withUnsafeBytes { table in
            try concurrentMap(parts.count) { position -> SnapshotFile.Chunk in
                switch parts[position] {
                case .kept(let chunk):
                    return chunk
                case .plain(let range, let count, let key):
                    let (chunk, sealed) = try index.sealSnapshotChunk(type, UnsafeRawBufferPointer(rebasing: table[range]), count: count, key: key)
                    try device.write(sealed, to: SnapshotFile.chunkName(name, id: chunk.id), durable: false)
                    return chunk
                }
            }
        }
        try device.write(index.sealSnapshotHeader(type, of: manifest, chunks: chunks), to: name, durable: false)
        let named = Set(chunks.map { SnapshotFile.chunkName(name, id: $0.id) })
        let stale = replaced.map { $0.chunks.map { SnapshotFile.chunkName(name, id: $0.id) } } ?? device.fileNames().filter { $0.hasPrefix(name + "-") }
        for file in stale where !named.contains(file) { try? device.remove(file) }
    }
}

/// A buffer's base address handed to the workers of `concurrentMap`, each of which touches
/// only its own part.
private struct UnsafeSendablePointer: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
    init(_ raw: UnsafeMutableRawPointer?) { self.raw = raw }
}
