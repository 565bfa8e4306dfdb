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
    /// One listing row per item (its first; one-time-code rows are the login again).
    let rows: [IdentityListing.Row]
    /// Every row's `name`, `user`, `site` and tags, lower-cased, NUL between them, one after another.
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
        var seen = Set<RecordID>(minimumCapacity: listing.count)
        var rows: [IdentityListing.Row] = [], haystack: [UInt8] = []
        var folded: [(start: Int32, end: Int32)] = [], foldedTitle: [(start: Int32, end: Int32)] = []
        rows.reserveCapacity(listing.count)
        folded.reserveCapacity(listing.count)
        foldedTitle.reserveCapacity(listing.count)
        haystack.reserveCapacity(listing.withUnsafeText(\.count) + 2 * listing.count)
        listing.withUnsafeText { text in
            for row in listing.rows where row.entry != .oneTimeCode && seen.insert(row.recordID).inserted {
                // Three segments, NUL between; no array per row (a table's building was a fifth allocation).
                func segment(_ range: Range<Int>) -> (start: Int32, end: Int32) {
                    let from = haystack.count
                    Self.appendFolded(UnsafeBufferPointer(rebasing: text[range]), to: &haystack)
                    return (Int32(from), Int32(haystack.count))
                }
                let start = haystack.count
                let name = segment(row.name)
                haystack.append(0)
                let user = segment(row.user)
                haystack.append(0)
                let site = segment(row.identifier)
                for tag in IndexShardCoding.tagRanges(row.tags, in: text) {
                    haystack.append(0)
                    _ = segment(tag)
                }
                foldedTitle.append(!row.name.isEmpty ? name : !row.identifier.isEmpty ? site : user)
                rows.append(row)
                folded.append((Int32(start), Int32(haystack.count)))
            }
        }
        self.listing = listing
        self.rows = rows
        self.haystack = haystack
        self.folded = folded
        self.foldedTitle = foldedTitle
        self.token = token
        byName = Self.sortedByTitle(rows, foldedTitle, in: haystack)
    }

    /// Row positions in `order`.
    func positions(_ order: Order) -> [Int] {
        if order == .name { return byName }
        if let sorted = otherOrders[order] { return sorted }
        var place = [Int](repeating: 0, count: rows.count)
        for (at, index) in byName.enumerated() { place[index] = at }
        let key: (IdentityListing.Row) -> Int64 = order == .lastUsed ? { Int64(clamping: $0.lastUsed) } : { $0.modified }
        let sorted = rows.indices.sorted { a, b in
            let (x, y) = (key(rows[a]), key(rows[b]))
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
            listing.withUnsafeText { listingText in
                positions.filter { index in
                    if let kind, rows[index].kind != kind { return false }
                    if let wantedTag, !Self.tagList(rows[index].tags, in: listingText, holds: wantedTag) { return false }
                    let range = folded[index]
                    return needle.isEmpty || Self.contains(needle, in: UnsafeBufferPointer(rebasing: text[Int(range.start)..<Int(range.end)]))
                }
            }
        }
    }

    /// Every tag of the table's items, each once: gathered at the first ask, then kept with the
    /// table (a keystroke's first page names them again).
    private(set) lazy var allTags: Set<String> = listing.withUnsafeText { text in
        var seen = Set<String>()
        for row in rows where !row.tags.isEmpty {
            for tag in IndexShardCoding.tagRanges(row.tags, in: text) { seen.insert(String(decoding: UnsafeBufferPointer(rebasing: text[tag]), as: UTF8.self)) }
        }
        return seen
    }

    // MARK: A row's strings (for the rows a page shows)

    func name(_ index: Int) -> String { listing.name(rows[index]) }
    func user(_ index: Int) -> String { listing.withUserBytes(of: rows[index]) { String(decoding: $0, as: UTF8.self) } }
    func site(_ index: Int) -> String { listing.withIdentifierBytes(of: rows[index]) { String(decoding: $0, as: UTF8.self) } }
    func tags(_ index: Int) -> [String] { listing.tags(rows[index]) }
    /// What a person calls the item: its name, else its site, else its user.
    func title(_ index: Int) -> String {
        let name = name(index)
        if !name.isEmpty { return name }
        let site = site(index)
        return site.isEmpty ? user(index) : site
    }

    /// Whether row `a` comes before row `b` of `other` in `order` (merging several vaults' lists).
    func precedes(_ a: Int, _ b: Int, of other: VaultPageTable, in order: Order) -> Bool {
        if order == .lastUsed, rows[a].lastUsed != other.rows[b].lastUsed { return rows[a].lastUsed > other.rows[b].lastUsed }
        if order == .modified, rows[a].modified != other.rows[b].modified { return rows[a].modified > other.rows[b].modified }
        let (x, y) = (foldedTitle[a], other.foldedTitle[b])
        return haystack[Int(x.start)..<Int(x.end)].lexicographicallyPrecedes(other.haystack[Int(y.start)..<Int(y.end)])
    }

    // MARK: Internals

    /// `bytes` lower-cased: ASCII by table, a text with any other byte through Unicode's
    /// default case mapping (`String.lowercased()`).
    private static func appendFolded(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            let start = out.count
            out.append(contentsOf: bytes)
            out.withUnsafeMutableBufferPointer { all in
                for index in start..<all.count where all[index] >= 0x41 && all[index] <= 0x5A { all[index] |= 0x20 }
            }
        } else {
            out += String(decoding: bytes, as: UTF8.self).lowercased().utf8
        }
    }

    /// Row positions by folded title bytes, then record id: each title's first sixteen bytes
    /// compared as two integers, whole titles only on a tie (100,000 `String` comparisons took
    /// most of a table's building).
    private static func sortedByTitle(_ rows: [IdentityListing.Row], _ titles: [(start: Int32, end: Int32)], in text: [UInt8]) -> [Int] {
        text.withUnsafeBufferPointer { text in
            func prefix(_ start: Int, _ end: Int) -> UInt64 {
                var value: UInt64 = 0
                for offset in 0..<8 { value = value << 8 | UInt64(start + offset < end ? text[start + offset] : 0) }
                return value
            }
            let keys = titles.map { title in
                (prefix(Int(title.start), Int(title.end)), prefix(Int(title.start) + 8, Int(title.end)))
            }
            return rows.indices.sorted { a, b in
                if keys[a] != keys[b] { return keys[a] < keys[b] }
                let (x, y) = (titles[a], titles[b])
                let first = UnsafeBufferPointer(rebasing: text[Int(x.start)..<Int(x.end)])
                let second = UnsafeBufferPointer(rebasing: text[Int(y.start)..<Int(y.end)])
                if first.elementsEqual(second) { return rows[a].recordID.hex < rows[b].recordID.hex }
                return first.lexicographicallyPrecedes(second)
            }
        }
    }

    /// Whether the stored tag list at `list` holds `tag`, without a string or an array per row.
    private static func tagList(_ list: Range<Int>, in text: UnsafeBufferPointer<UInt8>, holds tag: [UInt8]) -> Bool {
        var found = false
        IndexShardCoding.forEachTag(list, in: text) { range in
            found = range.count == tag.count && UnsafeBufferPointer(rebasing: text[range]).elementsEqual(tag)
            return !found
        }
        return found
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
