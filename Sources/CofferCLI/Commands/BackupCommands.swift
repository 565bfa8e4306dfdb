import Coffer
import FoundationEssentials

struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "write a consistent offline copy of the vault"
    static let usage = "backup DEST"
    static let discussion = """
        Copies the sealed files of the vault, under the container's lock so that concurrent
        writers wait and the copy is one consistent generation. DEST ending in .tar becomes one
        tar file (GNU tar reads it); anything else becomes a new directory. Needs no password: a
        backup is as sealed as the vault. A 'cp -a', 'rsync -a' or 'tar' of a vault nobody is
        writing to is a valid backup too.
        """
    static let examples = ["coffer backup ~/backups/coffer-$(date +%F).tar", "coffer backup /media/usb/coffer"]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let destination = try context.positionals(1...1, names: "DEST")[0]
        let vault = try context.sessionVault(requireUnlocked: false)
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
    static let examples = ["coffer verify", "coffer verify --password-stdin < pw", "coffer verify backup.tar"]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "PATH")
        var scratch: String?
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        var container = try context.container()
        if let path = operands.first {
            if path.hasSuffix(".tar") {
                let directory = try FileSystem.standard.makeTemporaryDirectory(prefix: "coffer-verify")
                scratch = directory
                try VaultBackup.restore(from: path, into: GroupContainer(path: directory + "/vault"), replacing: false)
                container = GroupContainer(path: directory + "/vault")
            } else {
                container = GroupContainer(path: path)
            }
        }
        let vault = try Vault.open(container, configuration: context.vaultConfiguration)
        context.unlockFromSession(vault)
        if !vault.isUnlocked, context.arguments.has("password-stdin") || context.arguments.has("password-file") {
            try context.unlock(vault)
        }
        let report = vault.verify()
        for problem in report.problems { context.print(problem.description) }
        let depth = report.checkedContents ? "records decrypted and matched"
            : report.checkedIndex ? "index checked; unlock to decrypt every record" : "structure only; unlock for the index and contents"
        let summary = "\(report.recordCount) record\(report.recordCount == 1 ? "" : "s"), \(depth)"
        if report.isClean {
            context.note("verified: \(summary)\(report.generation.map { ", generation \($0)" } ?? "")")
            return .success
        }
        context.note("\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") in \(summary)")
        return .dataError
    }
}

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a backup into an empty container"
    static let usage = "restore SRC [--force]"
    static let discussion = """
        SRC is a backup directory, a .tar from 'coffer backup', or a plain copy of a vault. The
        container must be empty or absent; --force replaces an existing vault (atomically: a
        failure leaves it as it was). On a machine without this vault's device state, the first
        unlock rebuilds the identity store. Restoring an older backup on a device that saw a
        newer generation is reported as a rollback until you pass --accept-rollback.
        """
    static let examples = ["coffer restore backup.tar", "coffer --container ~/vault-copy restore /media/usb/coffer"]
    static let options: [OptionSpec] = [.flag("force", "replace the vault in the container")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let source = try context.positionals(1...1, names: "SRC")[0]
        let container = try context.container()
        do {
            try VaultBackup.restore(from: source, into: container, replacing: context.arguments.has("force"))
        } catch VaultError.vaultExists {
            throw CLIError("\(container.path) is not empty", hint: "restore into an empty container, or pass --force to replace it",
                           code: .usage)
        }
        context.note("restored \(source) into \(container.path)")
        return .success
    }
}
