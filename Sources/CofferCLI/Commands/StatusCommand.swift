import Coffer
import CofferTerminalKit
import FoundationEssentials

struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show whether the vault is locked, and the identity store's state"
    static let usage = "status [--json]"
    static let options: [OptionSpec] = [.flag("json", "print one JSON object")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let vault = try context.openVault()
        let session = (try? context.configuration.sessions?.status(for: vault.vaultID)) ?? .locked
        let store = vault.identityStore.state
        var object: JSONObject = [
            "container": .string(vault.container.path), "vaultIdentifier": .string(vault.vaultID.hex),
            "identityStoreEnabled": .bool(store.isEnabled), "locked": .bool(session == .locked),
        ]
        var lines = ["vault:    \(vault.vaultID)", "container: \(vault.container.path)"]
        switch session {
        case .locked:
            lines.append("state:    locked")
        case .unlocked(let remaining, let idle):
            object["secondsRemaining"] = .integer(Int(remaining))
            object["idleTimeoutSeconds"] = .integer(Int(idle))
            lines.append("state:    unlocked, locks after \(Duration.format(remaining)) without use (idle timeout \(Duration.format(idle)))")
        }
        // Quick unlock (SPEC.md §8.6): whether a PIN opens the vault here, and until when.
        let quick = vault.quickUnlockState(secrets: context.configuration.sessions ?? KeyringSessions())
        for (name, value) in QuickUnlockCommand.json(quick) { object[name] = value }
        lines.append("unlock:   quick unlock " + QuickUnlockCommand.describe(quick))
        lines.append("autofill: identity store \(store.isEnabled ? "enabled" : "disabled") on this device")
        // The fill agent (SPEC.md §8.5): whether one answers, where fills would ask it.
        if let agent = FillAgentClient(environment: context.io.environment) {
            let running = UnixListener.isListening(at: agent.socketPath)
            object["fillAgent"] = .bool(running)
            lines.append("agent:    \(running ? "the fill agent answers on \(agent.socketPath)" : "no fill agent running")")
        }
        context.print(context.wantsJSON ? JSONOutput.render(.object(object)) : lines.joined(separator: "\n"))
        return .success
    }
}
