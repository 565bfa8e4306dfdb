import Coffer
import CofferTerminalKit

/// `COFFER_AUTOSYNC=1`: a sync after every command that changed a synced vault, with the keys
/// that command already holds (it never asks again). A change is never undone by a failed sync:
/// the failure is a warning, and the next sync carries the change. A fill changes nothing, so it
/// never waits for one.
enum AutoSync {
    /// What `coffer sync` syncs — one's vault and every team (SPEC.md §16.6) — told only when
    /// something came in. A team changed through `TEAM:` or `--team` syncs that team.
    static func afterChange(_ context: CommandContext) {
        guard context.io.environment["COFFER_AUTOSYNC"] == "1", let vault = context.openedVault, vault.isUnlocked else { return }
        do {
            if vault.isTeam {
                guard vault.syncRemote(environment: context.io.environment) != nil else { return }
                // The identity that opened the team (never a second password prompt): needed
                // only when the remote brings a new key.
                var options = SyncOptions(environment: context.io.environment)
                if let identity = vault.identityThatUnlockedIt { options.teamIdentity = { @Sendable in identity } }
                let report = try vault.sync(options)
                if report.teamKeyChanged { TeamCommand.refreshSession(context, vault) }
                if report.hasNews { SyncCommand.show(report, context) }
                return
            }
            _ = try SyncCommand.syncEverything(context, push: true, quiet: true, opened: vault)
        } catch SyncError.notConfigured {
            return  // nothing here syncs
        } catch {
            context.note("warning: the automatic sync failed (\(CLIError.from(error).message)); the change is saved here, run 'coffer sync'")
        }
    }
}
