import Coffer
import CofferTerminalKit

/// `coffer sync`: one vault on several devices through a git remote (SPEC.md §15).
struct SyncCommand: Command {
    static let subcommands = ["remote", "status"]
    static let name = "sync"
    static let summary = "sync the vault with a git remote: commit, fetch, merge, push"
    static let usage = "sync [--no-push] [--json] | sync remote URL | sync status [--json]"
    static let discussion = """
        'sync remote URL' makes the container a git repository whose remote is URL (any git
        remote: a bare repository on a USB stick, an SSH server, GitHub); only the header, the
        sealed records and tombstones of deleted records are shared, never the index or anything
        of this device's, and no file, branch or commit message names a service or a user.
        'sync' commits this device's changes, fetches, merges and pushes. It needs the vault
        unlocked: everything fetched is authenticated with the vault's keys before it is used,
        and a remote holding anything that is not an authentic part of this vault is refused
        (exit 65, nothing merged). Records added or edited on either side both land; a record
        edited on both sides keeps the higher revision and the other password in its history
        (and a copy named "… (conflict DATE)" when more than the password differs); an edit
        beats a deletion; a deleted record never comes back from an older copy; a remote that
        was rolled back or force-pushed cannot roll this device back, and the newer state is
        pushed back to it. 'sync status' shows where the container stands, without the network.
        Set COFFER_AUTOSYNC=1 to sync after every change made with this command line.
        A new device joins with 'coffer clone URL'.
        """
    static let examples = [
        "coffer sync remote git@example.net:vault.git", "coffer sync", "coffer sync --no-push --json", "coffer sync status",
    ]
    static let options: [OptionSpec] = [
        .flag("no-push", "merge the remote's changes but send nothing"),
        .flag("json", "print {\"incoming\", \"outgoing\": {\"added\", \"updated\", \"deleted\"}, \"conflicts\", \"remoteHistory\", \"pushed\", …}"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let words = context.arguments.positionals
        switch words.first {
        case "remote":
            guard words.count == 2 else { throw UsageError(words.count < 2 ? "missing URL" : "unexpected argument '\(words[2])'") }
            let vault = try context.openVault()
            try vault.setSyncRemote(words[1], environment: context.io.environment)
            context.note("\(vault.container.path) now syncs with \(words[1]); run 'coffer sync'")
            return .success
        case "status":
            _ = try context.positionals(1...1, names: "")
            return try status(context)
        case nil:
            return try syncEverything(context, push: !context.arguments.has("no-push"), quiet: false)
        case let other?:
            throw UsageError("expected 'remote URL' or 'status', not '\(other.prefix(20))'")
        }
    }

    /// One's vault and every team one belongs to on this device (SPEC.md §16.6), each with its
    /// remote; a team that fails is told and the others still sync. `--json` prints one document:
    /// one's own vault's report, with `"teams": {NAME: report or {"error", "code"}}`.
    /// - Parameter quiet: an automatic sync (`COFFER_AUTOSYNC`): only news is told.
    /// - Parameter opened: the vault the command already unlocked (an automatic sync: the
    ///   master password is never read twice).
    static func syncEverything(_ context: CommandContext, push: Bool, quiet: Bool, opened: Vault? = nil) throws -> ExitCode {
        let vault = try opened ?? context.unlockedVault()
        let options = SyncOptions(push: push, environment: context.io.environment)
        var document: JSONObject = [:]
        var synced = 0
        var firstFailure: CLIError?
        // A container that is a git repository syncs (and its repository is checked, so a
        // planted config is refused, SPEC.md §15.2) even when no remote could be read from it.
        if vault.isSyncedContainer {
            let report = try vault.sync(options)
            synced += 1
            if context.wantsJSON { document = json(report).objectValue ?? [:] } else if !quiet || report.hasNews { show(report, context) }
        }
        // A team named by --container or TEAM: syncs alone; one's own vault brings every team.
        var teams: JSONObject = [:]
        if !vault.isTeam {
            for team in context.teams(ownedBy: vault.container) where team.vault.isSyncedContainer {
                synced += 1
                do {
                    try team.vault.unlockTeam(identity: vault.personalIdentity())
                    if !context.wantsJSON && !quiet { context.note("team '\(team.name)':") }
                    let report = try TeamCommand.syncTeam(context, team.vault, personal: vault, showing: !context.wantsJSON && (!quiet))
                    if quiet, report.hasNews { context.note("team '\(team.name)':"); show(report, context) }
                    teams[team.name] = json(report)
                } catch {
                    let failure = CLIError.from(error)
                    firstFailure = firstFailure ?? failure
                    teams[team.name] = ["error": .string(failure.message), "code": .integer(UInt64(failure.code.rawValue))]
                    if !context.wantsJSON { CommandLineTool.report(CLIError("team '\(team.name)': \(failure.message)", hint: failure.hint, code: failure.code), io: context.io) }
                }
            }
        }
        guard synced > 0 else { throw SyncError.notConfigured(container: vault.container.path) }
        if context.wantsJSON {
            document["teams"] = .object(teams)
            context.print(JSONOutput.render(.object(document)))
        }
        if let firstFailure { throw ChildExit(status: firstFailure.code.rawValue) }
        return .success
    }

    static func show(_ report: SyncReport, _ context: CommandContext) {
        if context.wantsJSON {
            context.print(JSONOutput.render(json(report)))
            return
        }
        func counts(_ counts: SyncCounts) -> String {
            counts.total == 0 ? "nothing" : "\(counts.added) added, \(counts.updated) updated, \(counts.deleted) deleted"
        }
        if report.repairedRepository {
            context.note("the sync repository was damaged (a power loss before git's data reached the disk): rebuilt from the vault's files and the remote; nothing was lost")
        }
        context.note("from the remote: \(counts(report.incoming)); to the remote: \(counts(report.outgoing))" + (report.pushed ? " (pushed)" : ""))
        if report.conflicts > 0 {
            context.note("\(report.conflicts) item(s) edited on both sides: joined; the other passwords are in their history"
                + (report.conflictCopies > 0 ? "; \(report.conflictCopies) kept as '… (conflict DATE)' items" : ""))
        }
        switch report.remoteHistory {
        case .rewound: context.note("the remote was reset to an older commit (force-pushed); this device kept the newer state")
        case .rewritten: context.note("the remote's history was rewritten (force-pushed); this device kept its state and merged by content")
        default: break
        }
        if report.remoteBehind > 0 { context.note("the remote was behind on \(report.remoteBehind) record(s); the newer state was kept") }
        if report.refusedPutBack > 0 { context.note("the remote held \(report.refusedPutBack) deleted record(s) again; they stay deleted") }
        if report.headerAdopted {
            context.note(report.headerConflict
                ? "the master password was changed on this device and on another; the other change won: unlock with that password from now on"
                : "the master password was changed on another device; this device now uses the new one")
        }
    }

    static func json(_ report: SyncReport) -> JSONValue {
        func counts(_ counts: SyncCounts) -> JSONValue {
            .object(["added": .integer(counts.added), "updated": .integer(counts.updated), "deleted": .integer(counts.deleted)])
        }
        return .object([
            "incoming": counts(report.incoming), "outgoing": counts(report.outgoing), "conflicts": .integer(report.conflicts),
            "conflictCopies": .integer(report.conflictCopies), "remoteBehind": .integer(report.remoteBehind),
            "refusedPutBack": .integer(report.refusedPutBack), "remoteHistory": .string(report.remoteHistory.rawValue),
            "headerAdopted": .bool(report.headerAdopted), "headerConflict": .bool(report.headerConflict), "pushed": .bool(report.pushed),
            "repairedRepository": .bool(report.repairedRepository),
            "head": report.head.map(JSONValue.string) ?? .null,
            "stagedPaths": report.stagedPaths.map(JSONValue.integer) ?? .null,
            "gitSeconds": .number(seconds(report.gitTime)), "totalSeconds": .number(seconds(report.totalTime)),
        ])
    }

    static func seconds(_ duration: Swift.Duration) -> String {
        let (whole, attoseconds) = duration.components
        let millis = whole * 1000 + attoseconds / 1_000_000_000_000_000
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - String(millis % 1000).count))\(millis % 1000)"
    }

    static func status(_ context: CommandContext) throws -> ExitCode {
        // Unlocked by a live session, it counts changed files from the sync baseline (§15.4).
        let vault = try context.sessionVault(requireUnlocked: false)
        let status = try vault.syncStatus(environment: context.io.environment)
        if context.wantsJSON {
            context.print(JSONOutput.render(.object([
                "remote": status.remote.map(JSONValue.string) ?? .null, "head": status.head.map(JSONValue.string) ?? .null,
                "remoteHead": status.remoteHead.map(JSONValue.string) ?? .null, "lastSync": status.lastSync.map(JSONValue.string) ?? .null,
                "uncommittedFiles": .integer(status.uncommittedFiles), "ahead": .integer(status.ahead), "behind": .integer(status.behind),
            ])))
            return .success
        }
        context.print("remote:      \(status.remote ?? "none (coffer sync remote URL)")")
        context.print("last sync:   \(status.lastSync.map { String($0.prefix(12)) } ?? "never")")
        context.print("unsynced:    \(status.uncommittedFiles) changed file(s), \(status.ahead) commit(s) to push")
        context.print("remote has:  \(status.behind) commit(s) to merge (as of the last fetch)")
        return .success
    }
}
