import CofferStore
import CofferFormat

/// Identities in suggestion order, kept as the decrypted bucket payloads (one buffer, as read)
/// plus one small row per identity: what `coffer list`, `coffer search` and every lookup of the
/// identity store produce before anything becomes a `String`. A listing of everything also has
/// a row for each item that has no identity (a note, a card, a login without a site).
///
/// Why not `[RankedIdentity]`: a listing of 10,000 identities spent most of its time making,
/// copying, sorting and freeing the strings of each identity that it then only wrote out again
/// (97 M instructions and 2,600 page faults; SPEC.md §7.3 keeps the strings UTF-8 already). A
/// row holds positions into the payload; `identity(_:)` makes the Apple-shaped value on demand.
public struct IdentityListing: Sendable {
    /// What a row stands for.
    public enum Entry: Sendable {
        case password
        case oneTimeCode
        /// A passkey for its relying party: listed, never filled.
        case passkey
        /// An item without identities, listed by name (its `kind` says which).
        case item
    }

    public struct Row: Sendable {
        public let recordID: RecordID
        public let entry: Entry
        /// The item's kind: `login` for every identity.
        public let kind: ItemKind
        public let rank: Int64
        /// Unix seconds of the last fill on this device; 0 if never.
        public let lastUsed: UInt64
        public let type: CredentialServiceIdentifier.IdentifierType
        /// The record's match mode (SPEC.md §8.1).
        public let mode: MatchMode
        /// How it matched the request; `nil` in a listing of everything.
        let level: MatchLevel?
        let requestIndex: UInt16
        let identifierBounds: (start: Int32, end: Int32)
        let userBounds: (start: Int32, end: Int32)
        let nameBounds: (start: Int32, end: Int32)
        /// The record's `modified`, Unix seconds (0 from an index of layout 3 or older).
        public var modified: Int64 = 0
        /// Where its record's tag list is, as stored (`count u8 ‖ strings`; empty: no tags).
        var tagsBounds: (start: Int32, end: Int32) = (0, 0)
        /// The identity bucket it was read from (SPEC.md §7.6): what a listing snapshot brought up
        /// to date replaces when that bucket changes. 0 for a row of no bucket.
        var slot: UInt8 = 0

        /// Where the service identifier's UTF-8 bytes are in `withUnsafeText`'s buffer.
        public var identifier: Range<Int> { Int(identifierBounds.start)..<Int(identifierBounds.end) }
        /// Where the user name's UTF-8 bytes are in `withUnsafeText`'s buffer.
        public var user: Range<Int> { Int(userBounds.start)..<Int(userBounds.end) }
        /// Where the item's name is (empty when it has none).
        public var name: Range<Int> { Int(nameBounds.start)..<Int(nameBounds.end) }
        /// Where the record's stored tag list is (`IndexShardCoding.tagRanges` reads it).
        public var tags: Range<Int> { Int(tagsBounds.start)..<Int(tagsBounds.end) }
        public var match: ServiceMatcher.Match? { level.map { ServiceMatcher.Match(level: $0, requestIndex: Int(requestIndex)) } }

        var rankingKey: ServiceMatcher.RankingKey {
            ServiceMatcher.RankingKey(
                level: level?.rawValue ?? 0, requestIndex: Int(requestIndex), rank: rank, lastUsed: lastUsed, id: recordID.words)
        }
    }

    /// How the rows are ordered.
    public enum Order: Sendable {
        /// Best first: rank, then recent use on this device, then record id (SPEC.md §8.1); or
        /// the order of a matched request.
        case suggestion
        /// As a person reads a whole listing: by service (an item without one by its name), then
        /// user, then record id, then kind of row (`sortedByService()`).
        case service
    }

    /// The bucket payloads (or listing table), one after another; rows point into it.
    let text: [UInt8]
    public private(set) var rows: [Row]
    public private(set) var order: Order

    init(text: [UInt8], rows: [Row], order: Order) {
        self.text = text
        self.rows = rows
        self.order = order
    }

    /// Rows of framed identity buckets (`u32 LE length ‖ payload`, as `IdentityIndex` reads
    /// them), in `order`: by default as `ServiceMatcher.ordered` orders an unmatched list (rank,
    /// then recent use, then record id). The buffer is kept as it is; rows point into it.
    /// A listing wanted in service order asks for it here: sorted once, not twice (the first
    /// listing of a vault sorted a million rows in suggestion order, then in service order).
    init(framedBuckets text: [UInt8], usage: UsageLog, order: Order = .suggestion) throws(FormatError) {
        let rows = try Self.rows(ofFramedBuckets: text, usage: usage)
        self.text = text
        self.rows = order == .service ? Self.serviceOrdered(rows, in: text) : Self.ordered(rows)
        self.order = order
    }

    /// The rows of framed identity buckets as they are read, in no order (bringing a snapshot
    /// up to date matches them by content, `changes(from:…)`).
    static func rows(ofFramedBuckets text: [UInt8], usage: UsageLog) throws(FormatError) -> [Row] {
        guard text.count <= Int32.max else { throw .badLength }  // rows hold 32-bit positions
        var rows: [Row] = []
        var frames = ByteReader(text)
        while !frames.isAtEnd {
            let slot = try frames.integer(UInt8.self)
            let length = Int(try frames.integer(UInt32.self))
            let start = frames.offset
            _ = try frames.take(length)
            try IndexShardCoding.scanBucket(text, in: start..<start + length) { scanned throws(FormatError) in
                switch scanned {
                case .identity(let identity): rows.append(Self.row(identity, match: nil, usage: usage))
                case .item(let item) where item.listed: rows.append(Self.row(item, usage: usage))
                case .item, .attribute: return
                }
                rows[rows.count - 1].slot = slot
            }
        }
        return rows
    }

    /// The identities of bucket `payloads` (of an index of `layout`) that match `request` at
    /// `minimumLevel` or better, best first (SPEC.md §8.1), one row per record at its best match.
    /// Records of mode `never` are left out: they are never suggested for a service.
    /// - Parameter kind: which identities: passwords, or one-time codes.
    ///
    /// Entries of layout 2 are matched on their stored keys where they lie in the buffer;
    /// entries of layout 1, which store only the identifier, are parsed (`legacyKey`).
    init(
        matching request: [ServiceKey], shared: [SharedRequest] = [], minimumLevel: MatchLevel, kind: IdentityKind = .password,
        payloads: [[UInt8]], layout: IndexLayout, usage: UsageLog, legacyKey: (CredentialServiceIdentifier, _ site: String) -> ServiceKey
    ) throws(FormatError) {
        var text: [UInt8] = []
        text.reserveCapacity(payloads.reduce(0) { $0 + $1.count })
        // Bounds as pairs: an array of `Range<Int>` is generic metadata the runtime builds on
        // first use, checking `Int: Comparable` by scanning every conformance (0.15 M
        // instructions of a fill).
        var bounds: [(start: Int, end: Int)] = []
        for payload in payloads {
            bounds.append((text.count, text.count + payload.count))
            text += payload
        }
        guard text.count <= Int32.max else { throw .badLength }
        let wanted = RequestBytes(request, shared: shared)
        defer { wanted.deallocate() }
        var rows: [Row] = []
        let buffer = text
        for (start, end) in bounds {
            try IndexShardCoding.scanBucket(buffer, in: start..<end, layout: layout) { entry throws(FormatError) in
                guard case .identity(let scanned) = entry, scanned.kind == kind else { return }
                let match: ServiceMatcher.Match?
                if let parsed = scanned.parsed {
                    guard parsed.mode != .never else { return }
                    match = buffer.withUnsafeBufferPointer { all in
                        wanted.bestMatch(of: ServiceKeyBytes(
                            site: UnsafeBufferPointer(rebasing: all[scanned.site]), host: UnsafeBufferPointer(rebasing: all[parsed.host]),
                            scheme: UnsafeBufferPointer(rebasing: all[parsed.scheme]),
                            path: UnsafeBufferPointer(rebasing: all[parsed.path]), port: parsed.port))
                    }
                } else {
                    let service = CredentialServiceIdentifier(
                        identifier: String(decoding: buffer[scanned.identifier], as: UTF8.self), type: scanned.type)
                    match = ServiceMatcher.bestMatch(
                        of: legacyKey(service, String(decoding: buffer[scanned.site], as: UTF8.self)), in: request)
                }
                guard let match, match.level >= minimumLevel else { return }
                rows.append(Self.row(scanned, match: match, usage: usage))
            }
        }
        self.text = text
        self.rows = Self.firstPerRecord(Self.ordered(rows))
        self.order = .suggestion
    }

    /// A listing of `identities` in the order given (a matched request, already ranked), so one
    /// printer serves every list.
    public init(_ identities: [PasswordCredentialIdentity]) {
        var text: [UInt8] = []
        var rows: [Row] = []
        rows.reserveCapacity(identities.count)
        func append(_ string: String) -> (Int32, Int32) {
            let start = Int32(text.count)
            text.append(contentsOf: string.utf8)
            return (start, Int32(text.count))
        }
        for identity in identities {
            // Identities from the store always name a valid record; anything else lists as zeros.
            let id = (try? RecordID(hex: identity.recordIdentifier)) ?? RecordID(words: IdentifierWords(high: 0, low: 0))
            rows.append(Row(
                recordID: id, entry: .password, kind: .login, rank: Int64(identity.rank), lastUsed: 0,
                type: identity.serviceIdentifier.type, mode: .host, level: nil, requestIndex: 0,
                identifierBounds: append(identity.serviceIdentifier.identifier), userBounds: append(identity.user), nameBounds: (0, 0)))
        }
        self.text = text
        self.rows = rows
        self.order = .suggestion
    }

    private static func bounds(_ range: Range<Int>) -> (Int32, Int32) { (Int32(range.lowerBound), Int32(range.upperBound)) }

    private static func row(_ scanned: IndexShardCoding.ScannedIdentity, match: ServiceMatcher.Match?, usage: UsageLog) -> Row {
        Row(
            recordID: scanned.recordID, entry: Self.entry(of: scanned.kind), kind: .login,
            rank: scanned.rank, lastUsed: usage.lastUsed(scanned.recordID), type: scanned.type,
            mode: scanned.parsed?.mode ?? .host, level: match?.level, requestIndex: UInt16(clamping: match?.requestIndex ?? 0),
            identifierBounds: bounds(scanned.identifier), userBounds: bounds(scanned.user), nameBounds: bounds(scanned.name),
            modified: scanned.details.modified, tagsBounds: bounds(scanned.details.tags))
    }

    private static func entry(of kind: IdentityKind) -> Entry {
        switch kind {
        case .password: .password
        case .oneTimeCode: .oneTimeCode
        case .passkey: .passkey
        }
    }

    /// A listed item's row: its service (if any) where an identity has its identifier.
    private static func row(_ scanned: IndexShardCoding.ScannedItem, usage: UsageLog) -> Row {
        Row(
            recordID: scanned.recordID, entry: .item, kind: scanned.kind, rank: 0, lastUsed: usage.lastUsed(scanned.recordID),
            type: .URL, mode: .never, level: nil, requestIndex: 0, identifierBounds: bounds(scanned.service),
            userBounds: bounds(scanned.user), nameBounds: bounds(scanned.name),
            modified: scanned.details.modified, tagsBounds: bounds(scanned.details.tags))
    }

    private static func ordered(_ rows: [Row]) -> [Row] {
        rows.sorted { $0.rankingKey.precedes($1.rankingKey) }
    }

    /// The first row of each record, in order: a record listing several matching services is
    /// offered once, at its best match. Sorting positions by record keeps this O(n log n) for a
    /// site with thousands of accounts, without a hash table.
    private static func firstPerRecord(_ rows: [Row]) -> [Row] {
        let byRecord = rows.indices.sorted { (rows[$0].recordID.words, $0) < (rows[$1].recordID.words, $1) }
        var keep = [Bool](repeating: false, count: rows.count)
        for (position, index) in byRecord.enumerated() where position == 0 || rows[byRecord[position - 1]].recordID != rows[index].recordID {
            keep[index] = true
        }
        return rows.indices.filter { keep[$0] }.map { rows[$0] }
    }

    public var count: Int { rows.count }

    /// The rows sorted by first column (`firstColumn(of:in:)`), then user, as bytes, then
    /// record id and kind of row: how a whole listing reads to a person (`coffer list`,
    /// `coffer search`), and the order the listing table keeps (so a listing read from it is
    /// returned as it is).
    public func sortedByService() -> IdentityListing {
        guard order != .service else { return self }
        var sorted = self
        sorted.rows = Self.serviceOrdered(rows, in: text)
        sorted.order = .service
        return sorted
    }

    /// `rows` in service order (`sortedByService`). Positions are sorted, each by its first
    /// column's first sixteen bytes as two integers and only on a tie by whole-word byte
    /// comparison: generic byte-sequence comparisons made sorting 40,000 rows 50 ms, and
    /// `memcmp` alone was a fifth of a million rows' first listing.
    static func serviceOrdered(_ rows: [Row], in text: [UInt8]) -> [Row] {
        let order: [Int] = text.withUnsafeBufferPointer { text in
            let keys = rows.map { row in
                let first = Self.firstColumn(of: row, in: text)
                let second = min(first.lowerBound + 8, first.upperBound)..<first.upperBound
                return (prefix: (Self.bigEndianPrefix(of: first, in: text), Self.bigEndianPrefix(of: second, in: text)), first: first, user: row.user)
            }
            func compare(_ a: Range<Int>, _ b: Range<Int>) -> Int {
                UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: text[a])).lexicographicOrder(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: text[b])))
            }
            return keys.indices.sorted { a, b in
                let (keyA, keyB) = (keys[a], keys[b])
                if keyA.prefix != keyB.prefix { return keyA.prefix < keyB.prefix }
                let byFirst = compare(keyA.first, keyB.first)
                if byFirst != 0 { return byFirst < 0 }
                let byUser = compare(keyA.user, keyB.user)
                if byUser != 0 { return byUser < 0 }
                let (rowA, rowB) = (rows[a], rows[b])
                return rowA.recordID != rowB.recordID ? rowA.recordID < rowB.recordID : rowA.entry.tableByte < rowB.entry.tableByte
            }
        }
        return order.map { rows[$0] }
    }

    /// The first eight bytes of `text[range]` as a big-endian integer, zeros past its end: two
    /// ranges whose integers differ are in the order their bytes are (a shorter one, being
    /// padded with the smallest byte, first on a common prefix); equal integers tell nothing.
    static func bigEndianPrefix(of range: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var prefix: UInt64 = 0
        for offset in 0..<8 {
            let position = range.lowerBound + offset
            prefix = prefix << 8 | UInt64(position < range.upperBound ? text[position] : 0)
        }
        return prefix
    }

    /// What a person reads first on a row: an item's name (its service when it has none), a
    /// URL login's host and port (the whole URL made every row as wide as the longest sign-in
    /// path and sorted every URL login under "https"), else the identifier (SPEC.md §7.6).
    public static func firstColumn(of row: Row, in text: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        if row.entry == .item { return !row.name.isEmpty ? row.name : row.identifier }
        return row.type == .URL ? hostAndPort(of: row.identifier, in: text) : row.identifier
    }

    /// Where `scheme://host[:port]` has its host and port in `text[identifier]`: up to the first
    /// `/`, `?` or `#` after `//`; the whole identifier when it has no `://`.
    public static func hostAndPort(of identifier: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var position = identifier.lowerBound
        while position < identifier.upperBound, text[position] != 0x3A { position += 1 }
        guard position + 2 < identifier.upperBound, text[position + 1] == 0x2F, text[position + 2] == 0x2F else { return identifier }
        let start = position + 3
        var end = start
        while end < identifier.upperBound, text[end] != 0x2F, text[end] != 0x3F, text[end] != 0x23 { end += 1 }
        return start..<end
    }

    /// The rows best first (`Order.suggestion`): what every lookup of a whole listing but a
    /// person's reading wants.
    public func sortedForSuggestion() -> IdentityListing {
        guard order != .suggestion else { return self }
        var sorted = self
        sorted.rows = Self.ordered(rows)
        sorted.order = .suggestion
        return sorted
    }

    /// The rows for which `isIncluded` holds, in order.
    public func filter(_ isIncluded: (Row) throws -> Bool) rethrows -> IdentityListing {
        var filtered = self
        filtered.rows = try rows.filter(isIncluded)
        return filtered
    }

    /// The buffer the rows' `identifier` and `user` ranges point into, valid only inside `body`.
    public func withUnsafeText<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try text.withUnsafeBufferPointer(body)
    }

    /// The service identifier's UTF-8 bytes, valid only inside `body`.
    public func withIdentifierBytes<Result>(of row: Row, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeText { try body(UnsafeBufferPointer(rebasing: $0[row.identifier])) }
    }

    /// The user name's UTF-8 bytes, valid only inside `body`.
    public func withUserBytes<Result>(of row: Row, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeText { try body(UnsafeBufferPointer(rebasing: $0[row.user])) }
    }

    /// The row as Apple's type.
    public func identity(_ row: Row) -> PasswordCredentialIdentity {
        PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(
                identifier: String(decoding: text[row.identifier], as: UTF8.self), type: row.type),
            user: String(decoding: text[row.user], as: UTF8.self),
            recordIdentifier: row.recordID.hex, rank: Int(row.rank))
    }

    /// The item's name (empty when it has none).
    public func name(_ row: Row) -> String {
        String(decoding: text[row.name], as: UTF8.self)
    }

    /// The record's tags as the index files them (SPEC.md §7.3: layout 4; none before).
    public func tags(_ row: Row) -> [String] {
        text.withUnsafeBufferPointer { all in
            IndexShardCoding.tagRanges(row.tags, in: all).map { String(decoding: UnsafeBufferPointer(rebasing: all[$0]), as: UTF8.self) }
        }
    }

    /// Whether the row's record carries `tag` (its UTF-8 bytes, compared byte for byte, as the
    /// vault page's filter and `coffer list --tag` compare): no string or array per row.
    public func carries(_ row: Row, tag: [UInt8]) -> Bool {
        guard !row.tags.isEmpty else { return false }
        return text.withUnsafeBufferPointer { all in
            var found = false
            IndexShardCoding.forEachTag(row.tags, in: all) { range in
                found = range.count == tag.count && UnsafeBufferPointer(rebasing: all[range]).elementsEqual(tag)
                return !found
            }
            return found
        }
    }

    /// The row as a ranked identity (what `credentialIdentities(for:)` returns).
    public func rankedIdentity(_ row: Row) -> RankedIdentity {
        RankedIdentity(identity: identity(row), match: row.match, lastUsed: row.lastUsed, mode: row.mode, tieBreak: row.recordID.words)
    }
}

/// A host of a site that shares its accounts with request entry `requestIndex` (SPEC.md
/// §8.1.1): an identity of that very host that meets the request's scheme and port rules
/// matches at `sharedCredential`.
struct SharedRequest {
    /// The sharing site's host (its domain, or `www.` under it), with the request entry's
    /// scheme and port.
    let key: ServiceKey
    let requestIndex: Int
}

/// A request's keys as bytes in one allocation that outlives the scan, so matching an entry
/// makes no copy and no closure per request. Released with `deallocate()`.
private struct RequestBytes {
    let keys: [ServiceKeyBytes]
    /// The shared sites' keys, each with the request entry it stands for.
    let shared: [(key: ServiceKeyBytes, requestIndex: Int)]
    private let storage: UnsafeMutableBufferPointer<UInt8>

    init(_ request: [ServiceKey], shared sharedRequests: [SharedRequest] = []) {
        let all = request + sharedRequests.map(\.key)
        let total = all.reduce(0) { $0 + $1.site.utf8.count + $1.host.utf8.count + $1.scheme.utf8.count + $1.path.utf8.count }
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(total, 1))
        self.storage = storage
        var offset = 0
        func place(_ text: String) -> UnsafeBufferPointer<UInt8> {
            let bytes = Array(text.utf8)
            _ = UnsafeMutableBufferPointer(rebasing: storage[offset..<offset + bytes.count]).initialize(from: bytes)
            defer { offset += bytes.count }
            return UnsafeBufferPointer(rebasing: storage[offset..<offset + bytes.count])
        }
        func bytes(_ key: ServiceKey) -> ServiceKeyBytes {
            ServiceKeyBytes(site: place(key.site), host: place(key.host), scheme: place(key.scheme), path: place(key.path), port: key.port)
        }
        keys = request.map(bytes)
        shared = sharedRequests.map { (bytes($0.key), $0.requestIndex) }
    }

    /// The best match over the request; a shared site's only when nothing else matched.
    func bestMatch(of stored: ServiceKeyBytes) -> ServiceMatcher.Match? {
        var best: ServiceMatcher.Match?
        for (index, wanted) in keys.enumerated() {
            guard let level = ServiceMatcher.matchLevel(stored, wanted) else { continue }
            if best == nil || level > best!.level { best = ServiceMatcher.Match(level: level, requestIndex: index) }
        }
        if best != nil { return best }
        for (wanted, requestIndex) in shared where ServiceMatcher.matchLevel(stored, wanted) != nil && ServiceKeyBytes.equal(stored.host, wanted.host) {
            if best == nil || requestIndex < best!.requestIndex { best = ServiceMatcher.Match(level: .sharedCredential, requestIndex: requestIndex) }
        }
        return best
    }

    func deallocate() { storage.deallocate() }
}
