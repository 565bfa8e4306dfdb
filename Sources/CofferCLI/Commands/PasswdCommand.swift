import Coffer
import CofferTerminalKit

struct PasswdCommand: Command {
    static let name = "passwd"
    static let changesVault = true
    static let summary = "change the master password"
    static let usage = "passwd"
    static let discussion = """
        Asks for the current master password, then the new one twice (or reads them from the
        first two lines of standard input with --password-stdin). Only the vault header is
        rewritten: the vault key, and so every record, stays the same.
        """

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let vault = try context.openVault()
        guard let current = try context.masterPassword(prompt: "Current master password: ") else { throw VaultError.locked }
        let new = try context.newSecret(prompt: "New master password: ", confirm: "Repeat new master password: ")
        try vault.changeMasterPassword(current: current, new: new)
        context.note("master password changed")
        context.warnIfWeak(new)
        return .success
    }
}
