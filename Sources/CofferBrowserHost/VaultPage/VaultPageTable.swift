import CofferProvider

/// One vault's items as the vault page lists them (SPEC.md §13.7): one row per item — its kind,
/// name, user and site, never a secret — with the text a search looks in, folded once, and the
/// rows in each order the page sorts by. Built from the identity listing and kept by the host
/// until the identity store's change token changes, so a keystroke of a search at 100,000 items
/// scans one buffer instead of listing, decoding and sorting the vault again.
final class VaultPageTable {
    struct Row {
        let recordID: RecordID
        let kind: ItemKind
        let name: String
        let user: String
        let site: String
        let lastUsed: UInt64
        /// The title lower-cased: what the name order compares.
        let sortKey: String
        /// Where the row's folded text (`name`, `user` and `site`, lower-cased) is in `haystack`.
        let folded: Range<Int>

        /// What a person calls the item: its name, else its site, else its user.
        var title: String { !name.isEmpty ? name : !site.isEmpty ? site : user }
    }

    /// How the page orders the list.
    enum Order: String, CaseIterable {
        /// By title, case-insensitively (then record id, so the order is total).
        case name
        /// Most recently filled on this device first; never-used items last, by title.
        case lastUsed
    }

    let rows: [Row]
    /// Every row's folded text, one after another.
    let haystack: [UInt8]
    /// Row positions in each order.
    let orders: [Order: [Int]]
    /// The identity store's change token the table was built at.
    let token: [UInt8]?

    init(_ listing: IdentityListing, token: [UInt8]?) {
        var seen = Set<RecordID>(minimumCapacity: listing.count)
        var rows: [Row] = [], haystack: [UInt8] = []
        rows.reserveCapacity(listing.count)
        for row in listing.rows where row.entry != .oneTimeCode && seen.insert(row.recordID).inserted {
            let identity = listing.identity(row)
            let name = listing.name(row), site = identity.serviceIdentifier.identifier
            let start = haystack.count
            haystack += "\(name)\u{0}\(identity.user)\u{0}\(site)".lowercased().utf8
            let title = !name.isEmpty ? name : !site.isEmpty ? site : identity.user
            rows.append(Row(
                recordID: row.recordID, kind: row.kind, name: name, user: identity.user, site: site, lastUsed: row.lastUsed,
                sortKey: title.lowercased(), folded: start..<haystack.count))
        }
        let byName = rows.indices.sorted { a, b in
            rows[a].sortKey != rows[b].sortKey ? rows[a].sortKey < rows[b].sortKey : rows[a].recordID.hex < rows[b].recordID.hex
        }
        var position = [Int](repeating: 0, count: rows.count)
        for (place, index) in byName.enumerated() { position[index] = place }
        let byUse = rows.indices.sorted { a, b in
            rows[a].lastUsed != rows[b].lastUsed ? rows[a].lastUsed > rows[b].lastUsed : position[a] < position[b]
        }
        self.rows = rows
        self.haystack = haystack
        self.orders = [.name: byName, .lastUsed: byUse]
        self.token = token
    }

    /// The rows of `kind` (any when nil) whose folded text holds `query` (already lower-cased),
    /// in `order`.
    func matching(_ query: String, kind: ItemKind?, order: Order) -> [Int] {
        let needle = Array(query.utf8)
        return haystack.withUnsafeBufferPointer { text in
            (orders[order] ?? []).filter { index in
                let row = rows[index]
                if let kind, row.kind != kind { return false }
                return needle.isEmpty || Self.contains(needle, in: UnsafeBufferPointer(rebasing: text[row.folded]))
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
