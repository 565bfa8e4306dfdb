/// One item read from an export, before it becomes a record.
import CofferProvider
public struct ImportedItem: Equatable, Sendable {
    /// Where it was in the source, for messages: "line 12", "item 3", "Work/github.com.gpg".
    public let origin: String
    public var draft: RecordDraft
    /// Files the item carried (SPEC.md §6.7), attached once the item is stored.
    public var attachments: [ImportedAttachment]

    public init(origin: String, draft: RecordDraft, attachments: [ImportedAttachment] = []) {
        self.origin = origin
        self.draft = draft
        self.attachments = attachments
    }
}

/// A file an imported item carries: its name, media type and content.
public struct ImportedAttachment: Equatable, Sendable {
    /// The largest file an importer inflates (a KeePass binary, a 1PUX file): 1 GiB.
    static let maximumSize = 1 << 30

    public var name: String
    public var mediaType: String
    public var content: [UInt8]

    public init(name: String, mediaType: String, content: [UInt8]) {
        self.name = name
        self.mediaType = mediaType
        self.content = content
    }
}

public enum ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownFormat
    /// Something that cannot be read, at `location` ("line 7", "item 3 'GitLab'", a path).
    case malformed(location: String, reason: String)
    /// A program the format needs is not installed (gpg for a pass store): SPEC.md §10's 69.
    case programMissing(program: String, package: String)
    /// A program the format needs ran and failed on the item at `location` (gpg could not
    /// decrypt it): SPEC.md §10's 71.
    case programFailed(location: String, program: String, status: Int32)

    public var description: String {
        switch self {
        case .unknownFormat: "unrecognised export: the header matches no known format (use --format)"
        case .malformed(let location, let reason): "\(location): \(reason)"
        case .programMissing(let program, let package): "\(program) is not installed (apt install \(package))"
        case .programFailed(let location, let program, let status): "\(location): \(program) could not read it (exit \(status))"
        }
    }

    static func malformed(line: Int, _ reason: String) -> ImportError { .malformed(location: "line \(line)", reason: reason) }

    /// What is wrong, without where.
    var reason: String {
        switch self {
        case .unknownFormat, .programMissing: description
        case .malformed(_, let reason): reason
        case .programFailed(_, let program, let status): "\(program) could not read it (exit \(status))"
        }
    }
}

extension RecordDraft: Hashable {
    /// Equal in every member a person sees; the dates are not compared (a re-export of the same
    /// item may carry other ones).
    public static func == (a: RecordDraft, b: RecordDraft) -> Bool {
        a.serviceIdentifiers == b.serviceIdentifiers && a.user == b.user && a.password == b.password && a.notes == b.notes
            && a.fields == b.fields && a.matchMode == b.matchMode && a.name == b.name && a.kind == b.kind && a.tags == b.tags
            && a.otp == b.otp && a.passwordHistory == b.passwordHistory && a.passkey == b.passkey && a.secretService == b.secretService
            && a.passwordReportedUnused == b.passwordReportedUnused && a.card == b.card && a.identity == b.identity
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(serviceIdentifiers.first?.identifier)
        hasher.combine(user)
        hasher.combine(password)
        hasher.combine(name)
    }

    /// The draft that would store `record` again (what an import compares with).
    public init(_ record: Record) {
        self.init(
            ItemContent(record), passwordHistory: record.passwordHistory, created: record.created, modified: record.modified,
            passkey: record.passkey, secretService: record.secretService, passwordReportedUnused: record.passwordReportedUnused)
    }
}

extension ImportedItem {
    /// Applies SPEC.md §12's duplicate rule: an item equal in every member to a stored one (or
    /// to one earlier in the source) is skipped and counted; items that only share their first
    /// service and user are all kept and named as possible duplicates.
    /// In place, so that an import's million items are held once. What has been seen is found
    /// by each draft's hash and position, not kept in a set of drafts: a draft is a large value
    /// (its card, identity and passkey members are inline), and a set of a million of them, with
    /// the kept items copied beside it, held more than 2 GB.
    public static func removeDuplicates(_ items: inout [ImportedItem], existing: [Record], report: inout ImportReport) {
        let stored = existing.map(RecordDraft.init)
        var firstWithHash: [Int: Int] = [:]  // a draft's hash → the position of the first seen with it
        var laterWithHash: [Int: [Int]] = [:]  // the others that hash alike but differ (rare)
        // Positions: the stored drafts first, then the items kept so far (moved to the front).
        func draft(at position: Int) -> RecordDraft {
            position < stored.count ? stored[position] : items[position - stored.count].draft
        }
        func seen(_ candidate: RecordDraft, hash: Int) -> Bool {
            guard let first = firstWithHash[hash] else { return false }
            return draft(at: first) == candidate || (laterWithHash[hash]?.contains { draft(at: $0) == candidate } ?? false)
        }
        func remember(_ hash: Int, at position: Int) {
            if firstWithHash[hash] == nil { firstWithHash[hash] = position } else { laterWithHash[hash, default: []].append(position) }
        }
        var byLogin: [String: String] = [:]  // service + user → first origin, for the report
        for (position, draft) in stored.enumerated() {
            let hash = draft.hashValue
            if !seen(draft, hash: hash) { remember(hash, at: position) }
            byLogin[loginKey(draft)] = "'\(existing[position].title)' already in the vault"
        }
        var kept = 0
        for position in items.indices {
            let hash = items[position].draft.hashValue
            guard !seen(items[position].draft, hash: hash) else {
                report.skippedDuplicates += 1
                continue
            }
            let key = loginKey(items[position].draft)
            if !key.isEmpty {
                if let first = byLogin[key] {
                    let draft = items[position].draft
                    report.possibleDuplicates.append("\(items[position].origin) and \(first): \(draft.user)@\(draft.serviceIdentifiers[0].identifier)")
                } else {
                    byLogin[key] = items[position].origin
                }
            }
            if kept != position { items.swapAt(kept, position) }
            remember(hash, at: stored.count + kept)
            kept += 1
        }
        items.removeLast(items.count - kept)
    }

    /// First service (case-folded) and user; empty for an item without a service.
    private static func loginKey(_ draft: RecordDraft) -> String {
        guard let service = draft.serviceIdentifiers.first else { return "" }
        return service.identifier.lowercased() + "\u{0}" + draft.user
    }
}
