import CofferProvider
import FoundationEssentials

/// The audit of one's whole vault — one's own logins and each team's — as `coffer audit` prints it
/// and the vault page's audit view shows it: one implementation, so both find the same.
extension VaultAudit {
    /// A team's logins and its member list (whose removals flag `exposed` passwords, SPEC.md §16.4).
    public struct Team: Sendable {
        public let name: String
        public let records: [Record]
        public let membership: TeamMembership

        public init(name: String, records: [Record], membership: TeamMembership) {
            self.name = name
            self.records = records
            self.membership = membership
        }
    }

    /// Where the breach check asks: the range API at a base URL (k-anonymity: five hex digits of
    /// a SHA-1 leave the machine), or a local sorted list.
    public enum BreachSource: Sendable {
        case rangeAPI(base: String)
        case file(String)
    }

    /// - Parameters:
    ///   - breaches: nil checks no breach; otherwise each login's password is looked up there.
    /// - Returns: the audit, and which team each team record is of (for its title).
    public static func ofVaults(
        own: [Record], teams: [Team], maximumAge: TimeInterval = 365 * 86_400, quirks: WebQuirks?, breaches: BreachSource?, environment: Environment
    ) throws(BreachCheck.Failure) -> (audit: VaultAudit, teamOf: [RecordID: String]) {
        let records = own + teams.flatMap(\.records)
        var audit = VaultAudit(records, maximumAge: maximumAge, quirks: quirks)
        for team in teams { audit.flagExposed(team.records, membership: team.membership) }
        let logins = records.filter { $0.kind == .login && !$0.password.isEmpty }
        let counts: [Int]
        switch breaches {
        case nil: counts = []
        case .rangeAPI(let base)?: counts = try BreachCheck.counts(of: logins.map(\.password), base: base, environment: environment)
        case .file(let path)?: counts = try BreachCheck.counts(of: logins.map(\.password), inFile: path)
        }
        for (record, count) in zip(logins, counts) where count > 0 {
            audit.add(.breached, record, detail: "seen \(count) times in breaches")
        }
        let teamOf = Dictionary(teams.flatMap { team in team.records.map { ($0.id, team.name) } }, uniquingKeysWith: { first, _ in first })
        return (audit, teamOf)
    }
}
