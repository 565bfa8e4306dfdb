import Coffer
import CofferTerminalKit

struct InitCommand: Command {
    static let name = "init"
    static let summary = "create a new vault"
    static let usage = "init [--kdf interactive|moderate|sensitive]"
    static let discussion = """
        Creates a vault in the container (0700) with a new master password, asked twice on the
        terminal or read from --password-stdin / --password-file. --kdf picks libsodium's Argon2id
        preset: interactive (2 passes, 64 MiB), moderate (3, 256 MiB, the default) or sensitive (4, 1 GiB).
        """
    static let examples = ["coffer init", "coffer --container /tmp/demo init --kdf interactive --password-stdin < pw.txt"]
    static let options: [OptionSpec] = [.value("kdf", "Argon2id cost: interactive, moderate (default) or sensitive")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let kdf = try parameters(context.arguments.value("kdf"))
        let container = try context.container()
        let password: SecureBytes
        if context.arguments.has("password-file") || context.arguments.has("password-stdin") {
            guard let given = try context.masterPassword(prompt: "") else { throw VaultError.locked }
            password = given
        } else if context.terminal != nil {
            password = try context.newSecret(prompt: "New master password: ", confirm: "Repeat master password: ")
        } else {
            throw CLIError("no terminal to ask for the new master password",
                           hint: "use --password-stdin or --password-file", code: .temporaryFailure)
        }
        let progress = context.keyDerivationProgress(context.configuration.kdfOverride ?? kdf)
        let vault = try Vault.create(
            in: container, masterPassword: password, kdf: context.configuration.kdfOverride ?? kdf,
            configuration: context.vaultConfiguration)
        progress.finish()
        context.note("created vault \(vault.vaultID) in \(container.path)")
        context.warnIfWeak(password)
        return .success
    }

    static func parameters(_ name: String?) throws -> KDFParameters {
        switch name ?? "moderate" {
        case "interactive": .interactive
        case "moderate": .moderate
        case "sensitive": .sensitive
        case let other: throw UsageError("unknown --kdf '\(other)'; use interactive, moderate or sensitive")
        }
    }
}
