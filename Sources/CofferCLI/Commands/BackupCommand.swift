import Coffer
import CofferTerminalKit
import FoundationEssentials

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
