import Coffer
import CofferTerminalKit

/// `coffer://ENTRY[/password|/user|/otp|/notes|/field/NAME]`: one member of one entry, as
/// `coffer run` and `coffer inject` name them (SPEC.md §10.2). ENTRY is resolved as every command
/// resolves it (`EntryOperand`), so `coffer://github.com/alice` is alice's GitHub password. The
/// member is read off the end: a last segment `password`, `user`, `otp` or `notes`, or
/// `field/NAME`; anything else is part of ENTRY. Segments are percent-decoded after splitting,
/// so `%2F` puts a slash into a name and `coffer://github.com/password/password` is the password
/// of a user called "password".
struct SecretReference: Equatable {
    enum Member: Equatable {
        case password, user, otp, notes
        case field(String)
    }

    static let scheme = "coffer://"
    let text: String
    let entry: String
    let member: Member

    init(_ text: String) throws {
        guard text.hasPrefix(Self.scheme) else {
            throw CLIError("'\(text.prefix(60))' is not a coffer:// reference", hint: "write coffer://ENTRY or coffer://ENTRY/user", code: .usage)
        }
        var segments = try text.dropFirst(Self.scheme.count).split(separator: "/", omittingEmptySubsequences: false)
            .map { segment -> String in
                guard let decoded = Self.percentDecoded(segment) else {
                    throw CLIError("'\(text.prefix(60))' has a malformed %-escape", code: .usage)
                }
                return decoded
            }
        var member = Member.password
        if segments.count >= 3, segments[segments.count - 2] == "field" {
            member = .field(segments.removeLast())
            segments.removeLast()
        } else if segments.count >= 2, let last = segments.last, let plain = Self.plainMembers.first(where: { $0.0 == last }) {
            member = plain.1
            segments.removeLast()
        }
        let entry = segments.joined(separator: "/")
        guard !entry.isEmpty, !segments.contains(where: \.isEmpty) || segments.count == 1 else {
            throw CLIError("'\(text.prefix(60))' names no entry", code: .usage)
        }
        self.text = text
        self.entry = entry
        self.member = member
    }

    private static let plainMembers: [(String, Member)] = [("password", .password), ("user", .user), ("otp", .otp), ("notes", .notes)]

    /// The member's current value (a one-time code is computed now; an HOTP counter moves on).
    func value(in personal: Vault, context: CommandContext) throws -> String {
        let (vault, entry) = try Self.scoped(entry, personal: personal, context: context)
        let id = try EntryOperand.resolve(entry, in: vault, context: context)
        let record = try vault.record(withID: id)
        switch member {
        case .password: return record.password
        case .user: return record.user
        case .notes: return record.notes
        case .otp:
            guard record.otp != nil else { throw CLIError("\(text.prefix(80)): '\(record.title)' has no one-time code", code: .noInput) }
            return try vault.oneTimeCode(forRecordWithID: id).code
        case .field(let name):
            guard let field = record.fields.first(where: { $0.name == name })
                ?? record.fields.first(where: { $0.name.lowercased() == name.lowercased() })
            else { throw CLIError("\(text.prefix(80)): '\(record.title)' has no field '\(name.prefix(40))'", code: .noInput) }
            return field.value
        }
    }

    /// `TEAM:ENTRY` (SPEC.md §16.6): the team of that name that `personal` opens, unlocked from
    /// its session or with the person's identity, and the entry; any other entry as it is.
    static func scoped(_ entry: String, personal: Vault, context: CommandContext) throws -> (Vault, String) {
        guard let reference = context.teamReference(entry) else { return (personal, entry) }
        guard let team = context.teams(ownedBy: personal.container).first(where: { $0.name == reference.team })?.vault else {
            return (personal, entry)  // a team of another vault on this device: not this one's
        }
        context.unlockFromSession(team)
        if !team.isUnlocked { try team.unlockTeam(identity: personal.personalIdentity()) }
        return (team, reference.entry)
    }

    static func percentDecoded(_ segment: Substring) -> String? {
        PercentEncoding.decode(segment)
    }
}
