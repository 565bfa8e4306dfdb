import Coffer
import CofferTerminalKit
import FoundationEssentials

struct ProviderCommand: Command {
    static let subcommands = ["enable", "disable"]
    static let name = "provider"
    static let summary = "turn AutoFill suggestions on or off for this device"
    static let usage = "provider enable|disable"
    static let discussion = """
        'enable' runs the provider's configuration flow: it requires the master password, and a
        cancelled or failed check leaves the provider off. 'disable' removes the device key that
        lets 'list' and suggestions work while the vault is locked.
        """

    static func run(_ context: CommandContext) throws -> ExitCode {
        let action = try context.positionals(1...1, names: "enable or disable")[0]
        let vault = try context.openVault()
        switch action {
        case "enable":
            let provider = context.hostSession(of: vault, interaction: CommandLineInteraction(context: context)).provider(for: vault)
            provider.prepareInterfaceForExtensionConfiguration()
            if case .cancelled(let error)? = provider.extensionContext.outcome { throw CLIError.from(error) }
            context.note("AutoFill enabled on this device")
        case "disable":
            try vault.identityStore.disable()
            context.note("AutoFill disabled on this device")
        default:
            throw UsageError("expected 'enable' or 'disable', not '\(action)'")
        }
        return .success
    }
}
