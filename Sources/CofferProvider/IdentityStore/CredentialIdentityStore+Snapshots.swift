import CofferStore
import CofferFormat

/// This device's listing snapshot and completion table (SPEC.md §7.6): derived from the identity
/// buckets, kept only while the store is enabled here, and brought up to date from the buckets
/// that changed rather than rebuilt — so the first `coffer list` or Tab after an edit of a
/// million-entry vault reads one bucket, not 256, sorts a few rows, not a million, and writes
/// the chunks the edit touched, not the whole table.
extension CredentialIdentityStore {
    /// At most this many changed buckets (three quarters) are merged into a snapshot; past that
    /// (an import touched most of the vault) reading every bucket is as cheap. A sync of 100
    /// edits changes about 140 (an edit changes two): at a million rows their merge takes about
    /// half of what a rebuild takes (docs/performance.md).
    static let mergedSlotsLimit = 192

    /// Every identity and listed item in service order: from this device's snapshot when it was
    /// made from the buckets `manifest` names, brought up to date when only some of them were
    /// replaced since, else from the buckets, saving a new snapshot. While the store is
    /// disabled here nothing is kept, and the rows come in suggestion order for the caller to sort.
    func listing(_ index: IdentityIndex, _ manifest: IndexManifest, usage: UsageLog) throws -> IdentityListing {
        let device = vault.deviceState
        guard device.providerSetting() == .enabled else {
            return try IdentityListing(framedBuckets: index.framedBuckets(of: manifest), usage: usage)  // the caller puts it in its order
        }
        let table = DerivedTable(.identityListing, index: index, device: device)
        if let listing = keptListing(table, manifest, usage: usage) { return listing }
        return try table.buildingAlone {
            // Another process may have built it while this one waited (the same manifest: a
            // writer waits for the shared lock every builder holds).
            if let listing = keptListing(table, manifest, usage: usage) { return listing }
            return try builtListing(table, manifest, usage: usage)
        }
    }

    /// The listing read from every bucket `manifest` names, saved as the snapshot (the caller
    /// holds the build lock).
    func builtListing(_ table: DerivedTable, _ manifest: IndexManifest, usage: UsageLog) throws -> IdentityListing {
        let listing = try IdentityListing(framedBuckets: table.index.framedBuckets(of: manifest), usage: usage, order: .service)
        let (bytes, parts) = listing.tableParts(chunkLength: vault.configuration.listingChunkLength)
        try? table.write(manifest, table: bytes, parts: parts)
        return listing
    }

    /// The snapshot as it is when it was made from `manifest`'s buckets, or brought up to date
    /// when only some were replaced since; nil when it must be built whole.
    private func keptListing(_ table: DerivedTable, _ manifest: IndexManifest, usage: UsageLog) -> IdentityListing? {
        guard let file = table.header() else { return nil }
        if file.isCurrent(for: manifest), let listing = try? openListing(file, table, usage: usage) { return listing }
        if let changed = file.changedSlots(for: manifest), !changed.isEmpty, changed.count <= Self.mergedSlotsLimit {
            return try? mergedListing(file, table, changed: changed, manifest, usage: usage)
        }
        return nil
    }

    private func openListing(_ file: SnapshotFile, _ table: DerivedTable, usage: UsageLog, spare: (bytes: Int, rows: Int) = (0, 0)) throws -> IdentityListing {
        let (text, ranges) = try table.read(file, Array(file.chunks.indices), spare: spare.bytes)
        return try IdentityListing(snapshot: text, plaintexts: ranges, counts: file.chunks.map(\.count), usage: usage, spareRows: spare.rows)
    }

    /// The snapshot `file` with the rows of the `changed` buckets that left taken out and those
    /// that came put in at their place in service order, in place: a million rows are held
    /// once. Only the chunks that lose or gain a row are sealed again; the completion table,
    /// when it was made from the same buckets as the snapshot, takes the same change: the
    /// candidates of the rows that left, and of those that came.
    private func mergedListing(
        _ file: SnapshotFile, _ table: DerivedTable, changed: [Int], _ manifest: IndexManifest, usage: UsageLog
    ) throws -> IdentityListing {
        let freshText = try table.index.framedBuckets(of: manifest, slots: changed)
        let freshRows = try IdentityListing.rows(ofFramedBuckets: freshText, usage: usage)
        var old = try openListing(file, table, usage: usage, spare: (freshText.count, freshRows.count))  // room for the coming rows
        var isChanged = [Bool](repeating: false, count: IndexManifest.identitySlots)
        for slot in changed { isChanged[slot] = true }
        // The rows of the changed buckets, then and now: most are the same.
        let (leaving, comingRows) = old.withUnsafeText { oldText in
            freshText.withUnsafeBufferPointer { newText in
                IdentityListing.changes(from: old.rows, in: oldText, changedSlots: isChanged, to: freshRows, in: newText)
            }
        }
        // The coming rows as table rows of their own, a few hundred: the changed buckets' text
        // (120 MB for 140 buckets at a million) is not kept.
        let (comingText, coming) = try freshText.withUnsafeBufferPointer { newText in
            var table: [UInt8] = []
            for position in comingRows { IdentityListing.encode(freshRows[position], in: newText, to: &table) }
            let rows = try table.withUnsafeBytes { try IdentityListing.rows(of: $0, in: 0..<table.count, count: comingRows.count, usage: usage) }
            return (table, rows)
        }
        // Where each coming row goes: before the first old row it precedes (binary search).
        var candidates: [[UInt8]: Int] = [:]
        let places: [Int] = old.withUnsafeText { oldText in
            comingText.withUnsafeBufferPointer { newText in
                for position in leaving { CompletionTable.keys(of: old.rows[position], in: oldText) { candidates[$0, default: 0] -= 1 } }
                return coming.map { row in
                    CompletionTable.keys(of: row, in: newText) { candidates[$0, default: 0] += 1 }
                    var low = 0, high = old.rows.count
                    while low < high {
                        let middle = (low + high) / 2
                        if IdentityListing.servicePrecedes(old.rows[middle], in: oldText, row, in: newText) { low = middle + 1 } else { high = middle }
                    }
                    return low
                }
            }
        }
        // Each old chunk's rows after the change, and whether it changed at all.
        let chunkStarts = file.chunks.reduce(into: [0]) { $0.append($0.last! + $1.count) }
        func chunk(of position: Int) -> Int {
            var low = 0, high = file.chunks.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if chunkStarts[middle] <= position { low = middle } else { high = middle - 1 }
            }
            return low
        }
        var counts = file.chunks.map(\.count)
        if counts.isEmpty { counts = [0] }
        var touched = Set<Int>()
        for position in leaving { counts[chunk(of: position)] -= 1; touched.insert(chunk(of: position)) }
        for place in places { let target = chunk(of: min(place, max(0, old.rows.count - 1))); counts[target] += 1; touched.insert(target) }
        // The merge, in place: the text grows by the coming rows' text, the rows lose the leaving ones
        // (one pass forward) and take the coming ones (one pass backward from the end).
        var text = old.text, rows = old.rows
        old = IdentityListing(text: [], rows: [], order: .service)  // the buffers are now held once
        let shift = Int32(text.count)
        text.append(contentsOf: comingText)
        var write = 0, next = 0
        var shiftedPlaces = places
        for read in rows.indices {
            if next < leaving.count, leaving[next] == read { next += 1; continue }
            rows[write] = rows[read]
            write += 1
        }
        for index in shiftedPlaces.indices {
            var low = 0, high = leaving.count  // leaving rows before the place
            while low < high { let middle = (low + high) / 2; if leaving[middle] < places[index] { low = middle + 1 } else { high = middle } }
            shiftedPlaces[index] -= low
        }
        rows.removeLast(rows.count - write)
        let order = coming.indices.sorted { shiftedPlaces[$0] != shiftedPlaces[$1] ? shiftedPlaces[$0] < shiftedPlaces[$1] : $0 < $1 }
        if let filler = rows.first ?? order.first.map({ coming[$0].shifted(by: shift) }) {
            rows.append(contentsOf: repeatElement(filler, count: order.count))
        }
        var source = write - 1, target = rows.count - 1
        for index in order.reversed() {
            while source >= 0, source >= shiftedPlaces[index] { rows[target] = rows[source]; source -= 1; target -= 1 }
            rows[target] = coming[index].shifted(by: shift)
            target -= 1
        }
        let merged = IdentityListing(text: text, rows: rows, order: .service)
        // The new table: kept chunks as they are, each touched one written again from its rows.
        var writer = ChunkWriter(chunkLength: vault.configuration.listingChunkLength)
        var parts: [SnapshotPart] = []
        merged.withUnsafeText { text in
            var position = 0
            for (chunk, count) in counts.enumerated() {
                defer { position += count }
                guard touched.contains(chunk) || file.chunks.isEmpty else {
                    parts.append(.kept(file.chunks[chunk]))
                    continue
                }
                for row in merged.rows[position..<position + count] { writer.append(row, in: text) }
                parts += writer.cutChunks()
            }
        }
        try? table.write(manifest, table: writer.table, parts: parts, replacing: file)
        updateCompletionTable(from: file, by: candidates, table.index, manifest)
        return merged
    }

    /// Applies a listing's change to the completion table when the table was made from the same
    /// buckets as the listing before it (`before`); any other table is left for a Tab to build.
    private func updateCompletionTable(from before: SnapshotFile, by candidates: [[UInt8]: Int], _ index: IdentityIndex, _ manifest: IndexManifest) {
        let table = DerivedTable(.completionTable, index: index, device: vault.deviceState)
        guard let file = table.header(), file.layout == before.layout, file.shards == before.shards,
              let (bytes, parts) = try? CompletionTable.applying(candidates, to: file, table)
        else { return }
        try? table.write(manifest, table: bytes, parts: parts, replacing: file)
    }

    /// A Tab's candidates (`completionCandidates(section:prefix:)`) under the lock the caller holds.
    func completionCandidates(section: UInt8, prefix: [UInt8], _ index: IdentityIndex, _ manifest: IndexManifest, usage: UsageLog) throws -> [UInt8] {
        let device = vault.deviceState
        guard device.providerSetting() == .enabled else {
            let (bytes, parts) = CompletionTable.build(try listing(index, manifest, usage: usage))
            return try CompletionTable.matches(section: section, prefix: prefix, in: bytes, parts: parts)
        }
        let table = DerivedTable(.completionTable, index: index, device: device)
        func saved() -> [UInt8]? {
            guard let file = table.header(), file.isCurrent(for: manifest) else { return nil }
            return try? CompletionTable.matches(section: section, prefix: prefix, in: file, table)  // a chunk that does not open: none
        }
        if let found = saved() { return found }
        // The listing brought up to date applies its change to a table made from the same buckets
        // as the snapshot; any other table is built from it (the listing read once either way).
        let listing = try listing(index, manifest, usage: usage)
        if let found = saved() { return found }
        return try table.buildingAlone {
            if let found = saved() { return found }  // another Tab built it while this one waited
            let (bytes, parts) = rebuildCompletionTable(table, from: listing, manifest)
            return try CompletionTable.matches(section: section, prefix: prefix, in: bytes, parts: parts)
        }
    }

    /// The completion table built whole from `listing` and saved, best effort (the caller holds
    /// the table's build lock).
    func rebuildCompletionTable(_ table: DerivedTable, from listing: IdentityListing, _ manifest: IndexManifest) -> (table: [UInt8], parts: [SnapshotPart]) {
        let built = CompletionTable.build(listing)
        try? table.write(manifest, table: built.table, parts: built.parts)
        return built
    }
}

extension IdentityListing.Row {
    /// The row with its strings `offset` bytes further on (its text appended to another).
    func shifted(by offset: Int32) -> Self {
        Self(
            recordID: recordID, entry: entry, kind: kind, rank: rank, lastUsed: lastUsed, type: type, mode: mode, level: level,
            requestIndex: requestIndex, identifierBounds: (identifierBounds.start + offset, identifierBounds.end + offset),
            userBounds: (userBounds.start + offset, userBounds.end + offset), nameBounds: (nameBounds.start + offset, nameBounds.end + offset),
            modified: modified, tagsBounds: (tagsBounds.start + offset, tagsBounds.end + offset), slot: slot)
    }
}
