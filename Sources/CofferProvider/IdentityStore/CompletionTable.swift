import CofferStore
import CofferFormat

/// What a shell's Tab offers (SPEC.md §7.6): every candidate of the listing, sorted, each with
/// the number of rows that give it, kept by this device in chunks of a snapshot file so that a
/// Tab opens only the chunk its word falls in, and a change adds and takes away the candidates
/// of the rows it replaced instead of building the table again.
///
/// A line is `u32 LE count ‖ u16 LE length ‖ key`, where the key is `section u8 ‖ candidate`
/// (section 0: ENTRY candidates, 1: SERVICE candidates); lines are sorted by key as bytes, each
/// key once, and a chunk's header key is its first line's.
enum CompletionTable {
    /// Small: a Tab decrypts one chunk (a million logins make ~2,000 of them).
    static let chunkLength = 64 << 10
    static let entrySection: UInt8 = 0, serviceSection: UInt8 = 1

    /// The candidates `row` gives, each `section ‖ candidate`: its name; for an identity also
    /// its service and `HOST/USER` as ENTRY candidates, and its service and a URL's host as
    /// SERVICE candidates. An item row's `service` (a Secret Service item's collection) is no
    /// candidate: no ENTRY resolves it. A candidate with a control character (C0, DEL or C1, as
    /// text for people escapes, SPEC.md §10) is left out: it would drive the terminal or split
    /// the candidate into two.
    static func keys(of row: IdentityListing.Row, in text: UnsafeBufferPointer<UInt8>, _ body: ([UInt8]) -> Void) {
        guard row.entry != .oneTimeCode else { return }  // the login again
        func add(_ section: UInt8, _ bytes: UnsafeBufferPointer<UInt8>, user: UnsafeBufferPointer<UInt8>? = nil) {
            guard !bytes.isEmpty, !DisplayText.needsEscaping(bytes), !(user.map(DisplayText.needsEscaping) ?? false) else { return }
            var key = [section]
            key += bytes
            if let user, !user.isEmpty { key.append(0x2F); key += user }
            body(key)
        }
        add(entrySection, UnsafeBufferPointer(rebasing: text[row.name]))
        guard row.entry != .item else { return }
        let service = UnsafeBufferPointer(rebasing: text[row.identifier]), user = UnsafeBufferPointer(rebasing: text[row.user])
        let host = UnsafeBufferPointer(rebasing: text[IdentityListing.hostAndPort(of: row.identifier, in: text)])
        add(entrySection, service)
        add(entrySection, host, user: user)
        add(serviceSection, service)
        if host.count != service.count { add(serviceSection, host) }
    }

    // MARK: Building

    /// The whole table of `listing`, cut in chunks.
    static func build(_ listing: IdentityListing) -> (table: [UInt8], parts: [SnapshotPart]) {
        var keys: [UInt8] = []
        var bounds: [(start: Int, end: Int)] = []
        listing.withUnsafeText { text in
            for row in listing.rows {
                Self.keys(of: row, in: text) { key in
                    bounds.append((keys.count, keys.count + key.count))
                    keys += key
                }
            }
        }
        var writer = ChunkWriter(chunkLength: chunkLength)
        keys.withUnsafeBytes { raw in
            func bytes(_ bound: (start: Int, end: Int)) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: raw[bound.start..<bound.end]) }
            // Positions sorted by whole-word byte comparison (a generic comparison of 150,000
            // substrings took 0.6 s).
            bounds.sort { bytes($0).lexicographicOrder(bytes($1)) < 0 }
            var position = 0
            while position < bounds.count {
                var next = position + 1
                while next < bounds.count, bytes(bounds[next]).lexicographicOrder(bytes(bounds[position])) == 0 { next += 1 }
                writer.append(bytes(bounds[position]), count: next - position)
                position = next
            }
        }
        return writer.finished()
    }

    // MARK: Reading

    /// The candidates of `section` that start with `prefix`, one per line (LF after each),
    /// opening only the chunks they lie in.
    static func matches(section: UInt8, prefix: [UInt8], in file: SnapshotFile, _ table: DerivedTable) throws -> [UInt8] {
        let wanted = [section] + prefix
        // The last chunk whose first key is not above `wanted`: the first match is in it or later.
        var low = 0, high = file.chunks.count
        while low < high {
            let middle = (low + high) / 2
            if !wanted.lexicographicallyPrecedes(file.chunks[middle].key) { low = middle + 1 } else { high = middle }
        }
        var output: [UInt8] = []
        for chunk in max(0, low - 1)..<file.chunks.count {
            let (text, ranges) = try table.read(file, [chunk])
            guard try collect(wanted, in: text, ranges[0], count: file.chunks[chunk].count, into: &output) else { break }
        }
        return output
    }

    /// The same search over a table just built (`build`), before it is sealed.
    static func matches(section: UInt8, prefix: [UInt8], in table: [UInt8], parts: [SnapshotPart]) throws -> [UInt8] {
        var output: [UInt8] = []
        for part in parts {
            guard case .plain(let range, let count, _) = part else { continue }
            guard try collect([section] + prefix, in: table, range, count: count, into: &output) else { break }
        }
        return output
    }

    /// Appends each candidate of `bytes[range]` whose key starts with `wanted`.
    /// - Returns: whether the matches may go on past the range (none past it was seen yet).
    private static func collect(_ wanted: [UInt8], in bytes: [UInt8], _ range: Range<Int>, count: Int, into output: inout [UInt8]) throws -> Bool {
        var goesOn = true
        try forEachLine(in: bytes, range, count: count) { key, _ in
            if key.starts(with: wanted) {
                output += key.dropFirst()
                output.append(0x0A)
            } else if !key.lexicographicallyPrecedes(wanted) {
                goesOn = false
            }
        }
        return goesOn
    }

    /// Calls `body` with each line's key and count in `bytes[range]`.
    static func forEachLine(
        in bytes: [UInt8], _ range: Range<Int>, count: Int, _ body: (ArraySlice<UInt8>, UInt32) throws -> Void
    ) throws {
        var reader = ByteReader(bytes, range: range)
        for _ in 0..<count {
            let number = try reader.integer(UInt32.self)
            let key = try reader.lengthPrefixedBytes()
            guard number > 0, !key.isEmpty, key.first! <= serviceSection else { throw FormatError.nonCanonical("completion line") }
            try body(key, number)
        }
        guard reader.isAtEnd else { throw FormatError.badLength }
    }

    // MARK: Changing

    /// The table `file` with `changes` applied — each key's count moved by its number, a line
    /// whose count reaches 0 removed, a new key added — writing again only the chunks a change
    /// falls in; the others are kept.
    /// - Throws: when a chunk does not open or parse, or a count would go below 0 (the table
    ///   was not made from the rows the change takes away): the caller builds it again.
    static func applying(_ changes: [[UInt8]: Int], to file: SnapshotFile, _ table: DerivedTable) throws -> (table: [UInt8], parts: [SnapshotPart]) {
        let sorted = changes.filter { $0.value != 0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        // The chunk each change falls in: the last whose first key is not above it.
        var byChunk: [Int: [([UInt8], Int)]] = [:]
        var chunk = 0
        for (key, change) in sorted {
            while chunk + 1 < file.chunks.count, !key.lexicographicallyPrecedes(file.chunks[chunk + 1].key) { chunk += 1 }
            byChunk[chunk, default: []].append((key, change))
        }
        let touched = byChunk.keys.sorted().filter { $0 < file.chunks.count }
        let (text, ranges) = try table.read(file, touched)
        var writer = ChunkWriter(chunkLength: chunkLength)
        var parts: [SnapshotPart] = []
        var opened = 0
        for position in file.chunks.isEmpty ? (sorted.isEmpty ? [] : [0]) : Array(file.chunks.indices) {
            guard let changes = byChunk[position] else {
                parts.append(.kept(file.chunks[position]))
                continue
            }
            var lines: [(key: [UInt8], count: Int)] = []
            if position < file.chunks.count {
                try forEachLine(in: text, ranges[opened], count: file.chunks[position].count) { lines.append((Array($0), Int($1))) }
                opened += 1
            }
            var merged: [(key: [UInt8], count: Int)] = []
            var next = 0
            for (key, change) in changes {
                while next < lines.count, lines[next].key.lexicographicallyPrecedes(key) { merged.append(lines[next]); next += 1 }
                let current = next < lines.count && lines[next].key == key ? lines[next].count : 0
                if current > 0 { next += 1 }
                guard current + change >= 0 else { throw FormatError.nonCanonical("completion count below zero") }
                if current + change > 0 { merged.append((key, current + change)) }
            }
            merged += lines[next...]
            for line in merged { line.key.withUnsafeBytes { writer.append($0, count: line.count) } }
            parts += writer.cutChunks()
        }
        return (writer.table, parts)
    }
}

extension ChunkWriter {
    /// Appends a completion line: `count` rows give `key`.
    mutating func append(_ key: UnsafeRawBufferPointer, count lines: Int) {
        table.append(littleEndian: UInt32(lines))
        table.append(littleEndian: UInt16(key.count))
        table += key
        ended(key: Array(key))
    }
}
