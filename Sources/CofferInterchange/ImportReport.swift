/// What an import did with every column or member of its source (SPEC.md §12): where each went,
/// or that it was dropped and how often, plus the oddities it met. Printed by every import,
/// `--dry-run` included: a migrant sees what happened to their data, not just a count.
import CofferProvider
public struct ImportReport: Sendable {
    /// One source column or member and what became of its non-empty values.
    public struct Member: Sendable, Equatable {
        public let source: String
        /// Where the values went ("name", "tag", "field 'PIN' (hidden)"); `nil` when dropped.
        public let destination: String?
        public internal(set) var count: Int
        /// Why it was dropped.
        public let reason: String?
    }

    public internal(set) var format: ImportFormat
    public internal(set) var members: [Member] = []
    /// Oddities met and handled ("line 7: 4 fields where the header has 5; the rest are empty").
    public internal(set) var notices: [String] = []
    /// Items equal in every member to one already in the vault or earlier in the source.
    public internal(set) var skippedDuplicates = 0
    /// Items kept although they share service and user with another (another password, another
    /// name): skipping them could lose a password, so both are kept and named here.
    public internal(set) var possibleDuplicates: [String] = []
    /// Where each (source, destination) pair is in `members`: a CSV with a thousand columns
    /// tallies each of them per row, and a linear search made that quadratic.
    private var memberPositions: [MemberKey: Int] = [:]
    private struct MemberKey: Hashable, Sendable {
        let source: String
        let destination: String?
    }

    init(format: ImportFormat) {
        self.format = format
    }

    /// Counts one value of `source` that went to `destination`. Empty values are not counted.
    mutating func kept(_ source: String, as destination: String, value: String) {
        guard !value.isEmpty else { return }
        tally(source, destination: destination, reason: nil)
    }

    /// Counts one value of `source` that could not be kept, saying why.
    mutating func dropped(_ source: String, because reason: String, value: String = "x") {
        guard !value.isEmpty else { return }
        tally(source, destination: nil, reason: reason)
    }

    mutating func notice(_ text: String) {
        // A file with a thousand broken rows says so once per kind of oddity after the first few.
        guard notices.count < 50 else {
            if notices.count == 50 { notices.append("… more oddities not listed") }
            return
        }
        notices.append(text)
    }

    private mutating func tally(_ source: String, destination: String?, reason: String?) {
        let key = MemberKey(source: source, destination: destination)
        if let index = memberPositions[key] {
            members[index].count += 1
        } else {
            memberPositions[key] = members.count
            members.append(Member(source: source, destination: destination, count: 1, reason: reason))
        }
    }

    /// The report as lines for a person: kinds, then each member, then oddities and duplicates.
    public func lines(items: [ImportedItem]) -> [String] {
        var lines: [String] = []
        let kinds = ItemKind.allCases.compactMap { kind -> String? in
            let count = items.count { $0.draft.kind == kind }
            return count == 0 ? nil : "\(count) \(kind.rawValue)\(count == 1 ? "" : "s")"
        }
        let passkeys = items.count { $0.draft.passkey != nil }
        let passkeyNote = passkeys == 0 ? "" : " (\(passkeys) with a passkey)"
        lines.append("\(format.displayName): \(kinds.isEmpty ? "no items" : kinds.joined(separator: ", "))\(passkeyNote)")
        for member in members {
            if let destination = member.destination {
                lines.append("  \(member.source) → \(destination) (\(member.count))")
            } else {
                lines.append("  \(member.source): dropped \(member.count) (\(member.reason ?? "not kept"))")
            }
        }
        if skippedDuplicates > 0 {
            lines.append("  skipped \(skippedDuplicates) duplicate\(skippedDuplicates == 1 ? "" : "s") (equal in every member to an item already there)")
        }
        lines += possibleDuplicates.map { "  possible duplicate, both kept: \($0)" }
        lines += notices.map { "  note: \($0)" }
        return lines
    }
}
