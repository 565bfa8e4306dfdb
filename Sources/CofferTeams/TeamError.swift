import CofferStore
import FoundationEssentials

/// Why a team operation cannot go on. Each case maps to one exit code (SPEC.md §16.7).
public enum TeamError: Error, Equatable, Sendable {
    /// The membership list or the key file breaks a rule of SPEC.md §16 (forged, forked,
    /// rolled back, signed by a non-admin): nothing of it is used. Exit 65.
    case refused(String)
    /// This person is not (or no longer) a member: their key opens nothing newer. Exit 77.
    case notMember(team: String)
    /// The team's list on the remote removed this person, as an admin's signed notice to them
    /// says (SPEC.md §16.3): when, and the admin's name as this device knew it. Exit 77.
    case removed(team: String, by: String?, on: UInt64)
    /// The change needs an admin of the team. Exit 77.
    case notAdmin(team: String)
    /// No team of that name on this device. Exit 66.
    case noTeam(String)
    /// A team of that name already exists here. Exit 73.
    case teamExists(String)
    /// A member named twice, a recipient that is no recipient, a name out of range. Exit 64.
    case invalid(String)
}

extension TeamError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .refused(let reason): "the team's member list (team.coffer) is refused: \(reason); nothing of it was used"
        case .notMember(let team):
            "team '\(team)' holds no sealed key for you: you were never added, or were removed, or its member list was replaced by someone who can push; nothing was merged"
        case .removed(let team, let by, let time):
            "you were removed from team '\(team)' on \(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(time))).prefix(10)) by \(by ?? "an admin this device did not know"); nothing was merged"
        case .notAdmin(let team): "only an admin of team '\(team)' can change its members"
        case .noTeam(let team): "no team '\(team)' on this device ('coffer team list' shows them)"
        case .teamExists(let team): "a team '\(team)' already exists on this device"
        case .invalid(let reason): reason
        }
    }
}
extension TeamError: SyncRefusal {}
