import CofferProvider

/// One vault's items as the vault page lists them (SPEC.md §13.7): one row per item — its kind,
/// name, user, site, tags and date, never a secret — with the text a search looks in, folded
/// once, and the rows in each order the page sorts by. Kept by the host until the identity store's change
/// token changes, so a keystroke of a search at 100,000 items scans one buffer instead of
/// listing, decoding and sorting the vault again.
///
/// Why rows point into the listing's buffer instead of holding strings: a table of 100,000
/// items made 300,000 strings, lower-cased and sorted them (half a second); a page shows 100,
/// and only those become strings (`title(_:)`, `name(_:)`…).
final class VaultPageTable {
    /// How the page orders the list.
    enum Order: String, CaseIterable {
        /// By title, case-insensitively: the folded title's UTF-8 bytes (the Unicode scalars'
        /// order), then record id, so the order is total.
        case name
        /// Most recently filled on this device first; never-used items last, by title.
        case lastUsed
        /// Most recently modified first (the record's `modified`, which the index holds from
        /// layout 4, SPEC.md §7.3), then by title.
        case modified
    }

    /// The listing the rows point into.
    let listing: IdentityListing
    /// Where each item's row is in the listing: one per item (its first; one-time-code rows
    /// are the login again). Positions, not rows: a copy of 100,000 rows cost 8 ms.
    let members: [Int32]
    /// Every item's `name`, `user`, `site`, a login's other sites and its tags, lower-cased, NUL
    /// between them, one item after another.
    let haystack: [UInt8]
    /// Where each row's folded text is in `haystack`, and its folded title within it.
    private let folded: [(start: Int32, end: Int32)]
    private let foldedTitle: [(start: Int32, end: Int32)]
    /// Row positions by name: every order's last tie-break, so made with the table.
    let byName: [Int]
    /// Row positions in the other orders, each sorted when the page first asks for it (the
    /// page opens by name: its first rows do not wait for two more sorts of every row).
    private var otherOrders: [Order: [Int]] = [:]
    /// The identity store's change token the table was built at.
    let token: [UInt8]?

    init(_ listing: IdentityListing, token: [UInt8]?) {
        let built = listing.withUnsafeText { Self.folding(listing.rows, in: $0) }
        self.listing = listing
        members = built.members
        haystack = built.haystack
        folded = built.folded
        foldedTitle = built.titles
        self.token = token
        byName = Self.sortedByTitle(members.map { listing.rows[Int($0)].recordID }, foldedTitle, in: haystack)
    }

    /// Which listing rows are items — a record's first row: one-time-code rows are the login
    /// again, and only an identity's record can have several rows — and their folded text,
    /// which holds every site of a login of several.
    ///
    /// Every buffer is a local of this function, never a closure's capture: a captured `var`
    /// is checked for exclusive access at each touch, and at 100,000 rows those checks and the
    /// copies of whole rows took a third of the table's building.
    private static func folding(_ listed: [IdentityListing.Row], in text: UnsafeBufferPointer<UInt8>)
        -> (members: [Int32], haystack: [UInt8], folded: [(start: Int32, end: Int32)], titles: [(start: Int32, end: Int32)])
    {
        // Only a record whose id shares its top 20 bits with another row's can have two rows:
        // counted first in a table that stays in the cache, so only those few are looked up in
        // a dictionary (100,000 insertions into a `Set<RecordID>` took a third of the building).
        var sightings = [UInt8](repeating: 0, count: 1 << 20)
        for row in listed where row.entry != .oneTimeCode && row.entry != .item {
            let key = Int(row.recordID.words.high >> 44)
            if sightings[key] < 2 { sightings[key] += 1 }
        }
        var members: [Int32] = []
        members.reserveCapacity(listed.count)
        var firstRow: [RecordID: Int32] = [:], laterRows: [Int32: [Int32]] = [:]
        for (position, row) in listed.enumerated() where row.entry != .oneTimeCode {
            if row.entry != .item && sightings[Int(row.recordID.words.high >> 44)] > 1 {
                if let first = firstRow[row.recordID] {
                    laterRows[first, default: []].append(Int32(position))
                    continue
                }
                firstRow[row.recordID] = Int32(position)
            }
            members.append(Int32(position))
        }
        // Room for the worst case, written through a pointer: each segment lower-cased is at
        // most three times its bytes (a byte that is not UTF-8 becomes U+FFFD), and a NUL
        // comes before each but the first. Rows' strings are their own bytes of `text`, so it
        // is never short; were it so, the text is written again into twice the room.
        var capacity = 4 * text.count + 3 * listed.count + 16
        while true {
            var folded: [(start: Int32, end: Int32)] = [], titles: [(start: Int32, end: Int32)] = []
            folded.reserveCapacity(members.count)
            titles.reserveCapacity(members.count)
            var overflowed = false
            let haystack = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                var out = FoldedText(buffer)
                for member in members {
                    let row = listed[Int(member)]
                    let name = out.appendFolded(text, row.name)
                    let user = out.appendFolded(text, row.user, separated: true)
                    let site = out.appendFolded(text, row.identifier, separated: true)
                    for later in laterRows[member] ?? [] { _ = out.appendFolded(text, listed[Int(later)].identifier, separated: true) }
                    if !row.tags.isEmpty {
                        for tag in IndexShardCoding.tagRanges(row.tags, in: text) { _ = out.appendFolded(text, tag, separated: true) }
                    }
                    titles.append(!row.name.isEmpty ? name : !row.identifier.isEmpty ? site : user)
                    folded.append((name.start, Int32(out.count)))
                }
                initialized = out.count
                overflowed = out.overflowed
            }
            if !overflowed { return (members, haystack, folded, titles) }
            capacity *= 2
        }
    }

    /// Row positions in `order`.
    func positions(_ order: Order) -> [Int] {
        if order == .name { return byName }
        if let sorted = otherOrders[order] { return sorted }
        var place = [Int](repeating: 0, count: members.count)
        for (at, index) in byName.enumerated() { place[index] = at }
        let key: (IdentityListing.Row) -> Int64 = order == .lastUsed ? { Int64(clamping: $0.lastUsed) } : { $0.modified }
        let sorted = members.indices.sorted { a, b in
            let (x, y) = (key(row(a)), key(row(b)))
            return x != y ? x > y : place[a] < place[b]
        }
        otherOrders[order] = sorted
        return sorted
    }

    /// The rows of `kind` (any when nil) carrying `tag` (any when nil; compared as bytes) whose
    /// folded text holds `query` (already lower-cased), in `order`.
    func matching(_ query: String, kind: ItemKind?, tag: String? = nil, order: Order) -> [Int] {
        let needle = Array(query.utf8), wantedTag = tag.map { Array($0.utf8) }
        let positions = positions(order)
        if needle.isEmpty && kind == nil && wantedTag == nil { return positions }
        return haystack.withUnsafeBufferPointer { text in
            positions.filter { index in
                if let kind, row(index).kind != kind { return false }
                if let wantedTag, !listing.carries(row(index), tag: wantedTag) { return false }
                let range = folded[index]
                return needle.isEmpty || Self.contains(needle, in: UnsafeBufferPointer(rebasing: text[Int(range.start)..<Int(range.end)]))
            }
        }
    }

    /// Every tag of the table's items, each once: gathered at the first ask, then kept with the
    /// table (a keystroke's first page names them again).
    private(set) lazy var allTags: Set<String> = listing.withUnsafeText { text in
        var seen = Set<String>()
        for member in members where !listing.rows[Int(member)].tags.isEmpty {
            let row = listing.rows[Int(member)]
            for tag in IndexShardCoding.tagRanges(row.tags, in: text) { seen.insert(String(decoding: UnsafeBufferPointer(rebasing: text[tag]), as: UTF8.self)) }
        }
        return seen
    }

    // MARK: A row's strings (for the rows a page shows)

    /// The listing row of the table's `index`th item.
    func row(_ index: Int) -> IdentityListing.Row { listing.rows[Int(members[index])] }

    func name(_ index: Int) -> String { listing.name(row(index)) }
    func user(_ index: Int) -> String { listing.withUserBytes(of: row(index)) { String(decoding: $0, as: UTF8.self) } }
    func site(_ index: Int) -> String { listing.withIdentifierBytes(of: row(index)) { String(decoding: $0, as: UTF8.self) } }
    func tags(_ index: Int) -> [String] { listing.tags(row(index)) }
    /// What a person calls the item: its name, else its site, else its user.
    func title(_ index: Int) -> String {
        let name = name(index)
        if !name.isEmpty { return name }
        let site = site(index)
        return site.isEmpty ? user(index) : site
    }

    /// Whether row `a` comes before row `b` of `other` in `order` (merging several vaults' lists).
    func precedes(_ a: Int, _ b: Int, of other: VaultPageTable, in order: Order) -> Bool {
        let (x, y) = (row(a), other.row(b))
        if order == .lastUsed, x.lastUsed != y.lastUsed { return x.lastUsed > y.lastUsed }
        if order == .modified, x.modified != y.modified { return x.modified > y.modified }
        let (first, second) = (foldedTitle[a], other.foldedTitle[b])
        return haystack[Int(first.start)..<Int(first.end)].lexicographicallyPrecedes(other.haystack[Int(second.start)..<Int(second.end)])
    }

    // MARK: Internals

    /// Row positions by folded title bytes, then record id: each title's first sixteen bytes
    /// compared as two integers, whole titles only on a tie (100,000 `String` comparisons took
    /// most of a table's building).
    private static func sortedByTitle(_ ids: [RecordID], _ titles: [(start: Int32, end: Int32)], in text: [UInt8]) -> [Int] {
        text.withUnsafeBufferPointer { text in
            func prefix(_ start: Int, _ end: Int) -> UInt64 {
                var value: UInt64 = 0
                for offset in 0..<8 { value = value << 8 | UInt64(start + offset < end ? text[start + offset] : 0) }
                return value
            }
            let keys = titles.map { title in
                (prefix(Int(title.start), Int(title.end)), prefix(Int(title.start) + 8, Int(title.end)))
            }
            return ids.indices.sorted { a, b in
                if keys[a] != keys[b] { return keys[a] < keys[b] }
                let (x, y) = (titles[a], titles[b])
                let first = UnsafeBufferPointer(rebasing: text[Int(x.start)..<Int(x.end)])
                let second = UnsafeBufferPointer(rebasing: text[Int(y.start)..<Int(y.end)])
                if first.elementsEqual(second) { return ids[a].hex < ids[b].hex }
                return first.lexicographicallyPrecedes(second)
            }
        }
    }

    /// Whether `needle` occurs in `text`: a first-byte scan, then a comparison (names are short;
    /// no table of a general search pays for itself here).
    private static func contains(_ needle: [UInt8], in text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard needle.count <= text.count, let first = needle.first else { return needle.isEmpty }
        var start = 0
        let last = text.count - needle.count
        while start <= last {
            if text[start] == first {
                var matched = 1
                while matched < needle.count && text[start + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return true }
            }
            start += 1
        }
        return false
    }
}

/// A table's folded text as it is written, into a buffer sized for the worst case: a segment
/// that might not fit is not written, and `overflowed` says so.
private struct FoldedText {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    var count = 0
    private(set) var overflowed = false

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// Appends `text[range]` lower-cased — ASCII byte by byte, a text with any other byte
    /// through Unicode's default case mapping (`String.lowercased()`) — after a NUL when
    /// `separated`, and says where it is.
    mutating func appendFolded(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, separated: Bool = false) -> (start: Int32, end: Int32) {
        guard !overflowed, buffer.count - count >= 3 * range.count + 1 else {
            overflowed = true
            return (Int32(count), Int32(count))
        }
        if separated {
            buffer[count] = 0
            count += 1
        }
        let start = count
        var high: UInt8 = 0
        for byte in text[range] {
            high |= byte
            buffer[count] = byte &- 0x41 < 26 ? byte | 0x20 : byte
            count += 1
        }
        if high >= 0x80 {
            count = start
            for byte in String(decoding: UnsafeBufferPointer(rebasing: text[range]), as: UTF8.self).lowercased().utf8 {
                guard count < buffer.count else {
                    overflowed = true
                    break
                }
                buffer[count] = byte
                count += 1
            }
        }
        return (Int32(start), Int32(count))
    }
}
