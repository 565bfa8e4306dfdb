import Coffer
import CofferTerminalKit
import FoundationEssentials

/// `coffer team …`: vaults shared with other people, with members, admins and key rotation,
/// synced through git (SPEC.md §16).
struct TeamCommand: Command {
    static let subcommands = ["create", "add", "remove", "admin", "members", "join", "leave", "list", "sync"]
    static let name = "team"
    static let summary = "share a vault with people: create, join, add and remove members"
    static let usage = """
        team create NAME [--remote URL] [--as LABEL] | team add NAME RECIPIENT [--admin] [--as LABEL]
               | team remove NAME MEMBER | team admin NAME MEMBER [--revoke] | team members NAME [--json]
               | team join URL [--founder FINGERPRINT] | team leave NAME [--force] | team list [--json] | team sync [NAME]
        """
    static let discussion = """
        A team is a vault of its own (group 'team.NAME', its own git remote) whose key is sealed
        to each member's identity instead of a master password: unlocking your own vault unlocks
        your teams, and 'fill', 'list', the browser and every other host see team items beside
        yours ('TEAM:ENTRY' names one; 'add --team NAME' writes into a team). The member list is
        signed: each change is an entry an admin signs, chained to the one before, from the
        founder's key, which you confirm by fingerprint when you join; a list forged, forked or
        rolled back on the remote is refused (exit 65). 'team add' takes the line 'coffer whoami'
        prints on the new member's machine (compare the fingerprints aloud); no record is
        re-sealed. 'team remove' makes a new team key, re-seals every item under it and seals it
        only to the remaining members. What the removed person already had, they keep: change
        the passwords it lists ('coffer audit' flags them until changed). MEMBER is a member's
        name, recipient string or the first digits of their fingerprint. With a remote, every
        change is synced at once.
        """
    static let examples = [
        "coffer team create ops --remote git@example.net:ops-vault.git", "coffer team add ops coffer1… --as alice",
        "coffer team join git@example.net:ops-vault.git", "coffer add --team ops github.com deploy", "coffer fill ops:github.com",
        "coffer team remove ops alice",
    ]
    static let options: [OptionSpec] = [
        .value("remote", "create: the team's git remote"), .value("as", "the member's name in the list (create: yours)"),
        .flag("admin", "add: the member may change the list too"), .flag("revoke", "admin: no longer an admin"),
        .value("founder", "join: the founder's fingerprint, confirmed without a question (scripts)"),
        .flag("json", "members, list: print JSON"),
        .flag("force", "leave: remove the team's copy without asking"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let words = context.arguments.positionals
        switch words.first {
        case "create": try create(context, try operands(words, 2, "NAME"))
        case "add": try add(context, try operands(words, 3, "NAME and RECIPIENT"))
        case "remove": try remove(context, try operands(words, 3, "NAME and MEMBER"))
        case "admin": try admin(context, try operands(words, 3, "NAME and MEMBER"))
        case "members": try members(context, try operands(words, 2, "NAME"))
        case "join": try join(context, try operands(words, 2, "URL"))
        case "list": try list(context, try operands(words, 1, ""))
        case "sync": try sync(context, Array(words.dropFirst()))
        case "leave": return try leave(context, try operands(words, 2, "NAME"))
        case let other?: throw UsageError("expected create, add, remove, admin, members, join, leave, list or sync, not '\(other.prefix(20))'")
        case nil: throw UsageError("missing a team command (create, add, remove, admin, members, join, leave, list, sync)")
        }
        return .success
    }

    private static func operands(_ words: [String], _ count: Int, _ names: String) throws -> [String] {
        guard words.count == count else { throw UsageError(words.count < count ? "missing \(names)" : "unexpected argument '\(words[count].prefix(40))'") }
        return Array(words.dropFirst())
    }

    // MARK: Commands

    private static func create(_ context: CommandContext, _ operands: [String]) throws {
        let name = operands[0]
        let personal = try context.unlockedVault()
        let container = try TeamDirectory.container(named: name, environment: context.io.environment)
        if (try? Vault.open(container, configuration: context.vaultConfiguration)) != nil { throw TeamError.teamExists(name) }
        let label = context.arguments.value("as") ?? context.io.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "founder"
        let team = try Vault.createTeam(
            named: name, founder: personal.personalIdentity(), founderName: label, owner: personal.container, in: container,
            configuration: context.vaultConfiguration)
        context.note("created team '\(name)' in \(container.path); you are its founder and admin")
        if let remote = context.arguments.value("remote") {
            try team.setSyncRemote(remote, environment: context.io.environment)
            try syncTeam(context, team, personal: personal)
        }
    }

    private static func add(_ context: CommandContext, _ operands: [String]) throws {
        let recipient: TeamRecipient
        do { recipient = try TeamRecipient(text: operands[1]) } catch {
            throw TeamError.invalid("'\(operands[1].prefix(24))…' is not a recipient string (the line 'coffer whoami' prints, starting with coffer1)")
        }
        let label = context.arguments.value("as") ?? "member-" + recipient.fingerprint.prefix(5)
        let admin = context.arguments.has("admin")
        try changeMembers(context, operands[0]) { team, personal in
            try team.addTeamMember(recipient, name: label, admin: admin, by: personal.personalIdentity())
            context.note("added \(label) (fingerprint \(recipient.fingerprint)) to '\(operands[0])'"
                + (admin ? " as an admin" : "") + "; they join with 'coffer team join URL'")
        }
    }

    private static func remove(_ context: CommandContext, _ operands: [String]) throws {
        try changeMembers(context, operands[0]) { team, personal in
            let member = try resolve(operands[1], in: team.teamMembership())
            let (_, readable) = try team.removeTeamMember(member, by: personal.personalIdentity())
            context.note("removed \(member.name) from '\(operands[0])'; the team key was replaced and \(readable.count) item(s) re-sealed under it")
            if !readable.isEmpty {
                context.note("\(member.name) could read these before and may have kept them: change their passwords ('coffer audit' flags them until then):")
                for record in readable { context.note("  \(operands[0]):\(record.title)") }
            }
        }
    }

    private static func admin(_ context: CommandContext, _ operands: [String]) throws {
        let revoke = context.arguments.has("revoke")
        try changeMembers(context, operands[0]) { team, personal in
            let member = try resolve(operands[1], in: team.teamMembership())
            try team.setTeamRole(of: member, admin: !revoke, by: personal.personalIdentity())
            context.note("\(member.name) is \(revoke ? "no longer an admin" : "now an admin") of '\(operands[0])'")
        }
    }

    /// A change of the member list, against the remote's latest: synced before (so that it
    /// follows every change the other admins pushed) and after. When another admin pushed a
    /// change in between, the sync drops this one (SPEC.md §16.5) and it is made again.
    ///
    /// All of it holds the team's membership lease (SPEC.md §16.5): the other devices stop
    /// pushing meanwhile, so the change lands however busy the team is.
    private static func changeMembers(_ context: CommandContext, _ name: String, _ change: (Vault, Vault) throws -> Void) throws {
        let (team, personal) = try openTeam(context, name)
        let synced = team.syncRemote(environment: context.io.environment) != nil
        try team.withMembershipLease(SyncOptions(environment: context.io.environment)) { lease in
            if synced { try syncTeam(context, team, personal: personal, lease: lease) }
            for _ in 0..<3 {
                try change(team, personal)
                guard synced, try !syncTeam(context, team, personal: personal, lease: lease).droppedMembershipChanges.isEmpty else { break }
                context.note("another admin changed the member list at the same moment; making the change again on top of theirs")
            }
        }
        refreshSession(context, team)
    }

    private static func members(_ context: CommandContext, _ operands: [String]) throws {
        // The list is sealed under the team key: a team's session opens it, else one's own vault.
        var team = try openTeamLocked(context, operands[0])
        context.unlockFromSession(team)
        if !team.isUnlocked { team = try openTeam(context, operands[0]).0 }
        let membership = try team.teamMembership()
        func name(of key: [UInt8]) -> String {
            membership.entries.last { $0.subject.signingKey == key }?.name ?? "a former member"
        }
        if context.wantsJSON {
            context.print(JSONOutput.render(.array(membership.members.map { member in
                .object([
                    "name": .string(member.name), "fingerprint": .string(member.recipient.fingerprint), "recipient": .string(member.recipient.text),
                    "admin": .bool(member.isAdmin), "founder": .bool(member.recipient.signingKey == membership.founder),
                    "addedBy": .string(name(of: member.addedBy)), "added": .string(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(member.addedAt)))),
                ])
            })))
            return
        }
        for member in membership.members {
            let role = member.recipient.signingKey == membership.founder ? "founder, admin" : member.isAdmin ? "admin" : "member"
            context.print("\(member.name)\t\(role)\t\(member.recipient.fingerprint)\tadded by \(name(of: member.addedBy)) \(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(member.addedAt))))")
        }
    }

    private static func join(_ context: CommandContext, _ operands: [String]) throws {
        let url = operands[0]
        let personal = try context.unlockedVault()
        let peeked = try Vault.peekTeam(at: url, identity: personal.personalIdentity(), environment: context.io.environment)
        let founder = peeked.members.first { $0.recipient.signingKey == peeked.founder }
        let fingerprint = TeamRecipient(signingKey: peeked.founder, receivingKey: peeked.entries[0].subject.receivingKey).fingerprint
        context.note("team '\(peeked.teamName)', founded by \(founder?.name ?? peeked.entries[0].name), founder's fingerprint: \(fingerprint)")
        if let given = context.arguments.value("founder") {
            guard fingerprint.filter(\.isNumber).hasPrefix(given.filter(\.isNumber)), given.filter(\.isNumber).count >= 10 else {
                throw TeamError.refused("the founder's fingerprint is not the one given with --founder")
            }
        } else if let terminal = context.terminal {
            let answer = terminal.readLine(prompt: "Is that the fingerprint the founder told you? [y/N] ") ?? ""
            guard answer.lowercased().hasPrefix("y") else { throw CLIError("not joined", code: .failure) }
        } else {
            throw CLIError("confirm the founder's fingerprint", hint: "on a terminal, or with --founder FINGERPRINT", code: .usage)
        }
        let container = try TeamDirectory.container(named: peeked.teamName, environment: context.io.environment)
        if (try? Vault.open(container, configuration: context.vaultConfiguration)) != nil { throw TeamError.teamExists(peeked.teamName) }
        let (_, report) = try Vault.joinTeam(
            from: url, into: container, identity: personal.personalIdentity(), founder: peeked.founder, owner: personal.container,
            configuration: context.vaultConfiguration, options: SyncOptions(push: false, environment: context.io.environment))
        context.note("joined team '\(peeked.teamName)': \(report.incoming.added) item(s)")
    }

    private static func list(_ context: CommandContext, _ operands: [String]) throws {
        let personal = try context.openVault()
        let teams = context.teams(ownedBy: personal.container, includingRemoved: true)
        func removal(_ team: Vault) -> String? {
            team.deviceState.teamRemoval().map { removal in
                "removed" + (removal.time > 0 ? " on \(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(removal.time))).prefix(10))" : "")
                    + (removal.by.isEmpty ? "" : " by \(removal.by)")
            }
        }
        if context.wantsJSON {
            context.print(JSONOutput.render(.array(teams.map { team in
                context.unlockFromSession(team.vault)
                let membership = try? team.vault.teamMembership()
                return .object([
                    "name": .string(team.name), "container": .string(team.vault.container.path),
                    "members": membership.map { .integer($0.members.count) } ?? .null, "remote": team.vault.syncRemote(environment: context.io.environment).map(JSONValue.string) ?? .null,
                    "removed": removal(team.vault).map(JSONValue.string) ?? .null,
                ])
            })))
            return
        }
        for team in teams {
            if let removed = removal(team.vault) {
                context.print("\(team.name)\t\(removed) ('coffer team leave \(team.name)' removes its copy)")
                continue
            }
            context.unlockFromSession(team.vault)
            let members = (try? team.vault.teamMembership()).map { "\($0.members.count) member(s)" } ?? "locked"
            context.print("\(team.name)\t\(members)\t\(team.vault.syncRemote(environment: context.io.environment) ?? "no remote")")
        }
    }

    /// `team leave NAME`: this device's copy of the team goes — its container and its device
    /// state. Someone removed keeps nothing they do not want; a member still in the list stays
    /// in it (an admin removes them) and is told so.
    private static func leave(_ context: CommandContext, _ operands: [String]) throws -> ExitCode {
        let name = operands[0]
        let team = try openTeamLocked(context, name)
        let removed = team.deviceState.teamRemoval() != nil
        if !context.arguments.has("force") {
            guard let terminal = context.terminal else {
                throw UsageError("refusing to remove team '\(name)' from this device without confirmation; pass --force")
            }
            let answer = terminal.readLine(prompt: "Remove team '\(name)' and every item of it from this device? [y/N] ") ?? ""
            guard ["y", "yes"].contains(answer.lowercased()) else {
                context.note("nothing removed")
                return .failure
            }
        }
        _ = try? context.configuration.sessions?.revoke(for: team.vaultID)
        try team.removeFromDevice()
        context.note("removed team '\(name)' from this device" + (removed ? ""
            : "; you are still in its member list: an admin removes you with 'coffer team remove \(name) MEMBER'"))
        return .success
    }

    private static func sync(_ context: CommandContext, _ operands: [String]) throws {
        guard operands.count <= 1 else { throw UsageError("unexpected argument '\(operands[1].prefix(40))'") }
        let personal = try context.unlockedVault()
        let names = operands.isEmpty
            ? context.teams(ownedBy: personal.container).map(\.name)
            : operands
        for name in names {
            let (team, _) = try openTeam(context, name, personal: personal)
            guard team.syncRemote(environment: context.io.environment) != nil else { continue }
            context.note("team '\(name)':")
            try syncTeam(context, team, personal: personal)
        }
    }

    // MARK: Helpers

    /// The team `name` and its owner, both unlocked with the identity (so the team holds its
    /// earlier keys too: a removal carries them over, a sync opens its base with them).
    static func openTeam(_ context: CommandContext, _ name: String, personal given: Vault? = nil) throws -> (Vault, Vault) {
        let team = try openTeamLocked(context, name)
        guard let owner = TeamDirectory.owner(of: team) else { throw TeamError.noTeam(name) }
        let personal = try given ?? {
            let vault = try Vault.open(owner, configuration: context.vaultConfiguration)
            context.unlockFromSession(vault)
            if !vault.isUnlocked { try context.unlock(vault) }
            return vault
        }()
        try team.unlockTeam(identity: personal.personalIdentity())
        return (team, personal)
    }

    static func openTeamLocked(_ context: CommandContext, _ name: String) throws -> Vault {
        let container = try TeamDirectory.container(named: name, environment: context.io.environment)
        do {
            return try Vault.open(container, configuration: context.vaultConfiguration)
        } catch VaultError.noVault {
            throw TeamError.noTeam(name)
        }
    }

    private static func resolve(_ text: String, in membership: TeamMembership) throws -> TeamMembership.Member {
        if let member = membership.members.first(where: { $0.name == text }) { return member }
        if let recipient = try? TeamRecipient(text: text), let member = membership.member(recipient.signingKey) { return member }
        let digits = text.filter(\.isNumber)
        if digits.count >= 5, digits.count == text.filter({ $0 != " " }).count {
            let matches = membership.members.filter { $0.recipient.fingerprint.filter(\.isNumber).hasPrefix(digits) }
            if matches.count == 1 { return matches[0] }
            if matches.count > 1 { throw TeamError.invalid("'\(text)' is the start of several members' fingerprints") }
        }
        throw TeamError.invalid("no member '\(text.prefix(40))' ('coffer team members \(membership.teamName)' lists them)")
    }

    @discardableResult
    /// - Parameter showing: tell the report (a `--json` or automatic sync tells it otherwise).
    static func syncTeam(_ context: CommandContext, _ team: Vault, personal: Vault, lease: String? = nil, showing: Bool = true) throws -> SyncReport {
        let identity = try personal.personalIdentity()
        let report = try team.sync(SyncOptions(environment: context.io.environment, teamIdentity: { identity }, heldLease: lease))
        if report.teamKeyChanged { refreshSession(context, team) }
        guard showing else { return report }
        if report.leaseWait > .zero { context.note("waited for another device's change of the member list") }
        SyncCommand.show(report, context)
        if report.membershipChanged { context.note("the member list changed on another device; 'coffer team members' shows it") }
        if !report.droppedMembershipChanges.isEmpty {
            context.note("another admin changed the member list first; not made here: " + report.droppedMembershipChanges.joined(separator: ", "))
        }
        return report
    }

    /// A live session of the team that holds an earlier key is given the current one.
    static func refreshSession(_ context: CommandContext, _ team: Vault) {
        guard let sessions = context.configuration.sessions, case .unlocked(_, let idle)? = try? sessions.status(for: team.vaultID),
              let keys = try? team.keys()
        else { return }
        try? sessions.store(vaultKey: keys.vaultKey, for: team.vaultID, idleTimeout: idle)
    }
}
