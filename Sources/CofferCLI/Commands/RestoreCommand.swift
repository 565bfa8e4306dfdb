import Coffer
import CofferTerminalKit
import FoundationEssentials

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a backup into an empty container"
    static let usage = "restore SRC [--force]"
    static let discussion = """
        SRC is a backup directory, a .tar, .tar.gz or .tar.zst from 'coffer backup', or a plain
        copy of a vault. It is checked first (authenticated and consistent, as 'verify' checks
        it). The container must be empty or absent; --force replaces an existing vault
        (atomically: a failure leaves it as it was). Restoring is choosing that state: a backup
        older than what this device has seen is confirmed on a terminal (or with --force), and
        its generation is then accepted here, so the next command works without
        --accept-rollback. On a machine without this vault's device state, the first unlock
        rebuilds the identity store.
        """
    static let examples = ["coffer restore backup.tar.zst", "coffer --container ~/vault-copy restore /media/usb/coffer"]
    static let options: [OptionSpec] = [.flag("force", "replace the vault in the container, and go back in generation without asking")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let source = try context.positionals(1...1, names: "SRC")[0]
        let container = try context.container()
        let progress = ProgressLine(io: context.io, label: "restoring", enabled: !context.wantsJSON)
        defer { progress.finish() }
        // Look before replacing anything: the backup must verify, and going back is a choice.
        let staged = StagedBackup.isDirectory(source) == true ? nil : try StagedBackup(source)
        let backup = try Vault.open(staged?.container ?? GroupContainer(path: source), configuration: context.vaultConfiguration)
        context.unlockFromSession(backup)
        let report = backup.verify(asBackup: true, of: container)
        guard report.isClean else {
            progress.finish()
            for problem in report.problems.dropFirst() { context.note(problem.description) }
            throw CLIError("\(source) does not verify (\(report.problems[0])); nothing was restored",
                           hint: report.problems.count > 1 ? "\(report.problems.count) problems; 'coffer verify \(source)' lists them" : nil,
                           code: .dataError)
        }
        if let seen = report.olderThanSeen, let generation = report.generation {
            progress.finish()
            try confirmGoingBack(from: seen, to: generation, context)
        }
        do {
            try VaultBackup.restore(from: staged?.container.path ?? source, into: container, replacing: context.arguments.has("force"))
        } catch {
            guard case .vaultExists = error else { throw error }  // `restore` throws only VaultError
            throw CLIError("\(container.path) is not empty", hint: "restore into an empty container, or pass --force to replace it",
                           code: .usage)
        }
        let restored = try Vault.open(container, configuration: context.vaultConfiguration)
        context.unlockFromSession(restored)
        if restored.isUnlocked || restored.identityStore.state.isEnabled {
            try restored.acceptRollback()
        }
        progress.finish()
        context.note("restored \(source) into \(container.path)\(report.generation.map { " (generation \($0))" } ?? "")")
        return .success
    }

    /// A restore that goes back in generation loses what was written since: asked on a
    /// terminal, done with --force, refused otherwise.
    private static func confirmGoingBack(from seen: UInt64, to generation: UInt64, _ context: CommandContext) throws {
        guard !context.arguments.has("force") else { return }
        let question = "This backup is generation \(generation); this device has seen generation \(seen). "
            + "Restoring it goes back: what was saved since is lost. Restore? [y/N] "
        guard let terminal = context.terminal else {
            throw CLIError("the backup (generation \(generation)) is older than what this device has seen (\(seen))",
                           hint: "pass --force to restore it anyway", code: .usage)
        }
        guard let answer = terminal.readLine(prompt: question), ["y", "yes"].contains(answer.lowercased()) else {
            throw CLIError("cancelled; nothing was restored")
        }
    }
}
