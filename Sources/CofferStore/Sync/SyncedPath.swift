import CofferFormat
/// A path a vault repository may hold (SPEC.md §15.1): the header, its seal, a team's key
/// file, a record, a tombstone or an attachment. Everything else a remote offers is refused.
package enum SyncedPath: Hashable {
    case header
    case headerSeal
    /// `team.coffer`, in a team vault only (SPEC.md §16.5).
    case teamKeys
    case record(RecordID)
    case tombstone(RecordID)
    /// An attachment's sealed file (SPEC.md §6.7): immutable, named by its record.
    case attachment(AttachmentID)

    static let recordsDirectory = GroupContainer.recordsName
    static let tombstonesDirectory = GroupContainer.tombstonesName
    static let attachmentsDirectory = GroupContainer.attachmentsName

    /// Parses a repository path; `nil` for anything not of a vault (other names, a record under
    /// another shard, upper-case hex, a nested path).
    init?(_ path: String) {
        if path == GroupContainer.headerName { self = .header; return }
        if path == GroupContainer.headerSealName { self = .headerSeal; return }
        if path == GroupContainer.teamKeysName { self = .teamKeys; return }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0] == Self.attachmentsDirectory {
            guard let id = try? AttachmentID(hex: String(parts[2])), parts[1] == GroupContainer.shardName(of: id) else { return nil }
            self = .attachment(id)
            return
        }
        guard parts.count == 3, let id = try? RecordID(hex: String(parts[2])), parts[1] == GroupContainer.shardName(of: id) else {
            return nil
        }
        switch parts[0] {
        case Self.recordsDirectory: self = .record(id)
        case Self.tombstonesDirectory: self = .tombstone(id)
        default: return nil
        }
    }

    var path: String {
        switch self {
        case .header: GroupContainer.headerName
        case .headerSeal: GroupContainer.headerSealName
        case .teamKeys: GroupContainer.teamKeysName
        case .record(let id): Self.recordsDirectory + "/" + GroupContainer.shardName(of: id) + "/" + id.hex
        case .tombstone(let id): Self.tombstonesDirectory + "/" + GroupContainer.shardName(of: id) + "/" + id.hex
        case .attachment(let id): Self.attachmentsDirectory + "/" + GroupContainer.shardName(of: id) + "/" + id.hex
        }
    }

    /// The one mode git may record for it: a plain file (no link, no executable, no submodule).
    static let fileMode = "100644"
}
