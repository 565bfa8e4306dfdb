import Coffer
import CofferTerminalKit

/// `coffer clone URL`: a new device joins a synced vault.
struct CloneCommand: Command {
    static let name = "clone"
    static let summary = "set up this device from a synced vault's git remote"
    static let usage = "clone URL [--container DIR | --group ID] [--json]"
    static let discussion = """
        Clones the repository into the container (which must not exist or be empty), asks for
        the master password to check that it is a Coffer vault you can open, and takes every
        record after authenticating it. Anything that fails leaves no container behind. From
        then on, 'coffer sync' keeps this device and the others in step.
        """
    static let examples = ["coffer clone git@example.net:vault.git", "coffer clone /media/usb/vault.git --group work"]
    static let options: [OptionSpec] = [.flag("json", "print what the first sync did, as 'coffer sync --json' does")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let url = try context.positionals(1...1, names: "URL")[0]
        let container = try context.container()
        guard let password = try context.masterPassword(prompt: "Master password of the vault at \(url): ") else {
            throw VaultError.locked
        }
        let (_, report) = try Vault.clone(
            from: url, into: container, masterPassword: password, configuration: context.vaultConfiguration,
            options: SyncOptions(push: false, environment: context.io.environment))
        if context.wantsJSON {
            context.print(JSONOutput.render(SyncCommand.json(report)))
        } else {
            context.note("cloned \(report.incoming.added) item(s) into \(container.path)")
        }
        return .success
    }
}
