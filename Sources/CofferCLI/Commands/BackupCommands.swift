import Coffer
import FoundationEssentials
import Glibc

struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "write a consistent offline copy of the vault"
    static let usage = "backup DEST"
    static let discussion = """
        Copies the sealed files of the vault, under the container's lock so that concurrent
        writers wait and the copy is one consistent generation. DEST ending in .tar becomes one
        tar file, .tar.gz or .tgz a gzip-compressed one, .tar.zst a zstd-compressed one (GNU tar
        reads all three); a name without a suffix becomes a new directory; any other archive
        name (.zip, .tar.xz …) is refused. Needs no password: a backup is as sealed as the vault.
        A 'cp -a', 'rsync -a' or 'tar' of a vault nobody is writing to is a valid backup too.
        """
    static let examples = ["coffer backup ~/backups/coffer-$(date +%F).tar.zst", "coffer backup /media/usb/coffer"]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let destination = try context.positionals(1...1, names: "DEST")[0]
        let vault = try context.sessionVault(requireUnlocked: false)
        let progress = ProgressLine(io: context.io, label: "backing up", enabled: !context.wantsJSON)
        defer { progress.finish() }
        let count = try VaultBackup.backup(vault, to: destination)
        context.note("backed up \(count) credential\(count == 1 ? "" : "s") to \(destination)")
        return .success
    }
}

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

/// A backup file unpacked into a private scratch directory to be opened like a container
/// (verify, and restore's look before it replaces anything); removed when released.
final class StagedBackup {
    let directory: String
    var container: GroupContainer { GroupContainer(path: directory + "/vault") }

    /// On a tmpfs when there is one (`/dev/shm`): the copy is sealed files that are only read
    /// and removed, and creating 10,000 of them on ext4 took most of a verify's time.
    init(_ source: String) throws {
        let memory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : nil
        directory = try FileSystem.standard.makeTemporaryDirectory(prefix: "coffer-backup", in: memory)
        do {
            try VaultBackup.restore(from: source, into: GroupContainer(path: directory + "/vault"), replacing: false, durable: false)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Whether `path` is a directory (a container or a directory backup) rather than a backup
    /// file; `nil` when nothing is there.
    static func isDirectory(_ path: String) -> Bool? {
        ((try? FileSystem.standard.userPathStatus(path)) ?? nil).map { $0.st_mode & S_IFMT == S_IFDIR }
    }
}

extension CommandContext {
    /// The live vault's generation when this device can read it (store enabled, or a session).
    func openLiveGeneration() throws -> UInt64? {
        let live = try Vault.open(container(), configuration: vaultConfiguration)
        unlockFromSession(live)
        return try? live.indexGeneration()
    }
}

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
