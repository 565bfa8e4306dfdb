import Coffer

/// `COFFER_AUTOSYNC=1`: a sync after every command that changed a synced vault, with the keys
/// that command already holds (it never asks again). A change is never undone by a failed sync:
/// the failure is a warning, and the next sync carries the change. A fill changes nothing, so it
/// never waits for one.
enum AutoSync {
    static func afterChange(_ context: CommandContext) {
        guard context.io.environment["COFFER_AUTOSYNC"] == "1", let vault = context.openedVault, vault.isUnlocked,
              vault.syncRemote(environment: context.io.environment) != nil
        else { return }
        do {
            let report = try vault.sync(SyncOptions(environment: context.io.environment))
            if report.incoming.total > 0 || report.conflicts > 0 || report.remoteHistory == .rewound || report.remoteHistory == .rewritten {
                SyncCommand.show(report, context)
            }
        } catch {
            context.note("warning: the automatic sync failed (\(CLIError.from(error).message)); the change is saved here, run 'coffer sync'")
        }
    }
}
