import Coffer
import CofferTerminalKit
import FoundationEssentials

struct VerifyCommand: Command {
    static let name = "verify"
    static let aliases = ["check"]
    static let summary = "check the vault (or a backup) for corruption, tampering and rollback"
    static let usage = "verify [PATH]"
    static let discussion = """
        Without any key: the layout, file modes and sizes, and that every file parses. With the
        identity store enabled on this device (or the vault unlocked): that the index agrees with
        every record (revision, ciphertext hash, generation). Unlocked (a session, or
        --password-stdin / --password-file): that every record decrypts and matches its
        identities. Prints one line per problem, naming the file, and exits 65 if there is any.
        PATH may be a container directory or a .tar backup.
        """
    static let examples = ["coffer verify", "coffer verify --password-stdin < pw", "coffer verify backup.tar.zst"]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "PATH")
        let progress = ProgressLine(io: context.io, label: "verifying", enabled: !context.wantsJSON)
        defer { progress.finish() }
        var staged: StagedBackup?
        var container = try context.container()
        if let path = operands.first {
            if StagedBackup.isDirectory(path) == false {
                staged = try StagedBackup(path)
                container = staged!.container
            } else {
                container = GroupContainer(path: path)
            }
        }
        let isBackup = operands.first.map { GroupContainer(path: $0).path != (try? context.container())?.path } ?? false
        let vault = try Vault.open(container, configuration: context.vaultConfiguration)
        context.unlockFromSession(vault)
        if !vault.isUnlocked, context.arguments.has("password-stdin") || context.arguments.has("password-file") {
            try context.unlock(vault)
        }
        let report = vault.verify(asBackup: isBackup, of: isBackup ? try? context.container() : nil)
        progress.finish()
        for problem in report.problems { context.print(problem.description) }
        let depth = report.checkedContents ? "records decrypted and matched"
            : report.checkedIndex ? "index checked; unlock to decrypt every record" : "structure only; unlock for the index and contents"
        let summary = "\(report.recordCount) record\(report.recordCount == 1 ? "" : "s"), \(depth)"
        guard report.isClean else {
            context.note("\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") in \(summary)")
            // The code from the problems' kind, as every other command decides it (SPEC.md §10).
            return report.hasUnsafeOwnership ? .unsafeContainer : .dataError
        }
        context.note("verified: \(summary)\(report.generation.map { ", generation \($0)" } ?? "")")
        if let seen = report.olderThanSeen, let generation = report.generation {
            let live = (try? context.openLiveGeneration()).flatMap { $0 }.map { "generation \($0), " } ?? ""
            context.note("backup of generation \(generation), older than the live vault (\(live)this device has seen \(seen)); "
                         + "age is not damage: it restores with 'coffer restore'")
        }
        return .success
    }
}
