import FoundationEssentials

/// What `coffer audit` finds in the logins of a vault (never printing a password): weak ones
/// (zxcvbn), reused ones (grouped), old ones (by the date the password was last set), and
/// logins sent over plain `http:`.
public struct VaultAudit: Sendable {
    public struct Finding: Equatable, Sendable {
        public enum Kind: String, Sendable { case weak, reused, old, insecure, breached }
        public let kind: Kind
        public let recordID: RecordID
        public let title: String
        /// Without any secret: "31 bits", "shared with 2 others", "412 days", "seen 3,861 times".
        public let detail: String

        public init(kind: Kind, recordID: RecordID, title: String, detail: String) {
            self.kind = kind
            self.recordID = recordID
            self.title = title
            self.detail = detail
        }
    }

    public private(set) var findings: [Finding] = []
    public let checked: Int

    /// - Parameter maximumAge: a password last set longer ago than this is old.
    public init(_ records: [Record], now: Date = Date(), maximumAge: TimeInterval = 365 * 86_400) {
        let logins = records.filter { $0.kind == .login && !$0.password.isEmpty }
        checked = logins.count
        var byPassword: [String: [Record]] = [:]
        for record in logins {
            byPassword[record.password, default: []].append(record)
            let context = [record.user, record.name] + record.serviceIdentifiers.map { ServiceKey(parsing: $0).host }
            let strength = PasswordStrength(of: record.password, context: context)
            if strength.isWeak { findings.append(Finding(kind: .weak, recordID: record.id, title: record.title, detail: "\(Int(strength.bits)) bits")) }
            let set = record.passwordHistory.first?.replaced ?? record.created
            let days = Int(now.timeIntervalSince(set) / 86_400)
            if now.timeIntervalSince(set) > maximumAge {
                findings.append(Finding(kind: .old, recordID: record.id, title: record.title, detail: "set \(days) days ago"))
            }
            if record.serviceIdentifiers.contains(where: { $0.identifier.lowercased().hasPrefix("http://") }) {
                findings.append(Finding(kind: .insecure, recordID: record.id, title: record.title, detail: "sent over http:"))
            }
        }
        // Groups in a stable order (by their first member's id), each member naming the others.
        for group in byPassword.values where group.count > 1 {
            let sorted = group.sorted { $0.id < $1.id }
            for record in sorted {
                let others = sorted.filter { $0.id != record.id }.map(\.title)
                findings.append(Finding(kind: .reused, recordID: record.id, title: record.title, detail: "same password as " + others.joined(separator: ", ")))
            }
        }
        findings.sort { ($0.kind.rawValue, $0.title, $0.recordID) < ($1.kind.rawValue, $1.title, $1.recordID) }
    }

    public mutating func add(_ finding: Finding) { findings.append(finding) }
}
