import CofferProvider
import FoundationEssentials

/// What `coffer audit` finds in the logins of a vault (never printing a password): weak ones
/// (zxcvbn), reused ones (grouped), old ones (by the date the password was last set), and
/// logins sent over plain `http:` — each with the page where its password is changed.
public struct VaultAudit: Sendable {
    public struct Finding: Equatable, Sendable {
        /// `exposed`: a team's password a removed member could read, not changed since (§16.4).
        /// `unused`: the site reported the password unused (it signs in another way now).
        public enum Kind: String, Sendable { case weak, reused, old, insecure, breached, exposed, unused }
        public let kind: Kind
        public let recordID: RecordID
        public let title: String
        /// Without any secret: "31 bits", "same password as …", "set 412 days ago", "seen 3,861 times".
        public let detail: String
        /// Where the password is changed (SPEC.md §12.2); `nil` for a login without a web site.
        public let changePasswordURL: String?

        public init(kind: Kind, recordID: RecordID, title: String, detail: String, changePasswordURL: String? = nil) {
            self.kind = kind
            self.recordID = recordID
            self.title = title
            self.detail = detail
            self.changePasswordURL = changePasswordURL
        }
    }

    public private(set) var findings: [Finding] = []
    public let checked: Int
    private let pages: ChangePasswordPages

    /// - Parameters:
    ///   - maximumAge: a password last set longer ago than this is old.
    ///   - quirks: the web's data: published change-password pages, and the sites that share (or
    ///     shared) their accounts, whose logins with one password are one account, not reuse.
    public init(_ records: [Record], now: Date = Date(), maximumAge: TimeInterval = 365 * 86_400, quirks: WebQuirks? = nil) {
        let pages = (try? quirks?.changePasswordPages()) ?? .wellKnownOnly
        self.pages = pages
        let logins = records.filter { $0.kind == .login && !$0.password.isEmpty }
        checked = logins.count
        var byPassword: [String: [Record]] = [:]
        for record in logins {
            byPassword[record.password, default: []].append(record)
            findings += Self.findings(of: record, now: now, maximumAge: maximumAge, pages: pages)
        }
        let sharing = (try? quirks?.everSharedCredentials()) ?? []
        // Groups in a stable order (by their first member's id), each member naming the others
        // it is not known to share an account with.
        for group in byPassword.values where group.count > 1 {
            let sorted = group.sorted { $0.id < $1.id }
            for record in sorted {
                let others = sorted.filter { $0.id != record.id && !Self.sharesAccount(record, $0, sharing) }.map(\.title)
                guard !others.isEmpty else { continue }
                findings.append(Finding(
                    kind: .reused, recordID: record.id, title: record.title, detail: "same password as " + others.joined(separator: ", "),
                    changePasswordURL: Self.changePasswordURL(for: record, pages: pages)))
            }
        }
        findings.sort { ($0.kind.rawValue, $0.title, $0.recordID) < ($1.kind.rawValue, $1.title, $1.recordID) }
    }

    /// A finding made outside (a breach count), with the record's change-password page.
    public mutating func add(_ kind: Finding.Kind, _ record: Record, detail: String) {
        findings.append(Finding(
            kind: kind, recordID: record.id, title: record.title, detail: detail, changePasswordURL: Self.changePasswordURL(for: record, pages: pages)))
    }

    /// Flags the logins of a team whose password was last set before a member who could read
    /// it was removed (SPEC.md §16.4): they may have kept it. Changing the password clears it.
    public mutating func flagExposed(_ records: [Record], membership: TeamMembership) {
        let removals = membership.entries.filter { $0.action == .remove }
        for record in records where record.kind == .login && !record.password.isEmpty {
            let set = UInt64(max(0, (record.passwordHistory.first?.replaced ?? record.created).timeIntervalSince1970))
            // The last removal after the password was set: that person saw it. Times are whole
            // seconds, so a removal in the very second the password was set is ambiguous: a
            // record at revision 1 was never re-sealed by a removal (every removal re-seals
            // every record it finds, revision + 1), so it was made after it and is not exposed.
            guard let removal = removals.last(where: { $0.time > set || ($0.time == set && record.revision > 1) }) else { continue }
            add(.exposed, record, detail: "readable by \(removal.name), removed \(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(removal.time))))")
        }
        findings.sort { ($0.kind.rawValue, $0.title, $0.recordID) < ($1.kind.rawValue, $1.title, $1.recordID) }
    }

    /// What one login shows by itself: weak, old, sent over http (what the browser's popup
    /// asks about the tab's logins, without reading the rest of the vault).
    public static func findings(
        of record: Record, now: Date = Date(), maximumAge: TimeInterval = 365 * 86_400, pages: ChangePasswordPages
    ) -> [Finding] {
        guard record.kind == .login, !record.password.isEmpty else { return [] }
        var found: [Finding] = []
        let url = changePasswordURL(for: record, pages: pages)
        let context = [record.user, record.name] + record.serviceIdentifiers.map { ServiceKey(parsing: $0).host }
        let strength = PasswordStrength(of: record.password, context: context)
        if strength.isWeak {
            found.append(Finding(kind: .weak, recordID: record.id, title: record.title, detail: "\(Int(strength.bits)) bits", changePasswordURL: url))
        }
        let set = record.passwordHistory.first?.replaced ?? record.created
        if now.timeIntervalSince(set) > maximumAge {
            let days = Int(now.timeIntervalSince(set) / 86_400)
            found.append(Finding(kind: .old, recordID: record.id, title: record.title, detail: "set \(days) days ago", changePasswordURL: url))
        }
        if record.serviceIdentifiers.contains(where: { $0.identifier.lowercased().hasPrefix("http://") }) {
            found.append(Finding(kind: .insecure, recordID: record.id, title: record.title, detail: "sent over http:", changePasswordURL: url))
        }
        if let reported = record.passwordReportedUnused {
            found.append(Finding(
                kind: .unused, recordID: record.id, title: record.title,
                detail: "the site reported the password unused on \(UTCTimestamp.format(reported).prefix(10)): remove it once you sign in another way",
                changePasswordURL: url))
        }
        return found
    }

    /// Where `record`'s password is changed (SPEC.md §12.2): for its first service with a
    /// host name, the published page, else `https://HOST/.well-known/change-password`; `nil`
    /// when no service names a host.
    public static func changePasswordURL(for record: Record, pages: ChangePasswordPages) -> String? {
        guard let host = record.serviceIdentifiers.lazy.map({ ServiceKey(parsing: $0) }).first(where: \.isParsed)?.host else { return nil }
        return pages.url(forHost: host)
    }

    /// Whether two logins are known to be one account on sites that share (or shared) it.
    private static func sharesAccount(_ a: Record, _ b: Record, _ sharing: [SharedCredentials]) -> Bool {
        guard !sharing.isEmpty else { return false }
        let hostsA = a.serviceIdentifiers.map { ServiceKey(parsing: $0) }.filter(\.isParsed).map(\.host)
        let hostsB = b.serviceIdentifiers.map { ServiceKey(parsing: $0) }.filter(\.isParsed).map(\.host)
        return hostsA.contains { hostA in hostsB.contains { hostB in sharing.contains { $0.relates(hostA, hostB) } } }
    }
}
