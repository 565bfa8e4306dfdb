import Coffer
import FoundationEssentials

struct UnlockCommand: Command {
    static let name = "unlock"
    static let summary = "keep the vault unlocked for every process of yours, for a while"
    static let usage = "unlock [--timeout DURATION]"
    static let discussion = """
        Checks the master password and keeps the vault key in the kernel keyring (never on disk),
        readable only by your user, until it goes unused for DURATION (default 15m; e.g. 90s,
        30m, 2h). Every use pushes the timeout back. 'coffer lock' ends it at once. It also starts
        the fill agent ('coffer agent'), which answers fills from a warm process while a session
        lives, unless --no-agent or COFFER_AGENT=off.
        """
    static let examples = ["coffer unlock", "coffer unlock --timeout 1h"]
    static let options: [OptionSpec] = [
        .value("timeout", "idle timeout, e.g. 90s, 15m, 2h (default 15m)"),
        .flag("no-agent", "do not start the fill agent now (a fill may start one later; COFFER_AGENT=off: never)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let timeout = try Duration.parse(context.arguments.value("timeout") ?? "15m")
        guard context.configuration.sessions != nil else { throw CLIError("unlock sessions are turned off in this host", code: .unavailable) }
        let vault = try context.openVault()
        // The hosts' one policy, told to start (or renew) sessions with this timeout. A team's
        // session lives with its owner's (SPEC.md §16.6): unlocking a team unlocks one's own
        // vault — its password is the one asked — and starts both sessions.
        let policy = context.hostSession(of: vault, interaction: CommandLineInteraction(context: context), startsSessions: true).unlockPolicy
        policy.sessionTimeout = timeout
        policy.replacesSessions = true
        try context.unlock(vault, policy: policy)
        // The policy starts sessions best effort; here the keyring's refusal is the answer.
        do {
            try policy.startSessionReportingErrors(for: vault)
        } catch {
            throw CLIError("\(error)", hint: "without the keyring every command asks for the master password", code: .unavailable)
        }
        context.note("unlocked for \(Duration.format(timeout)) of inactivity")
        if context.configuration.usesFillAgent, !context.arguments.has("no-agent"), let agent = FillAgentClient(environment: context.io.environment) {
            // Best effort: without the agent every fill still works, a little slower.
            do {
                try AgentCommand.startInBackground(context, socket: agent.socketPath)
            } catch let failure as CLIError {
                context.note("\(failure.message); fills work without it" + (failure.hint.map { " (\($0))" } ?? ""))
            }
        }
        return .success
    }
}

struct LockCommand: Command {
    static let name = "lock"
    static let summary = "end the unlock session now, for every process"
    static let usage = "lock"

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let vault = try context.openVault()
        // Unlocking one's vault unlocks one's teams; locking it locks them (SPEC.md §16.6).
        let ended = try context.hostSession(of: vault, interaction: nil).unlockPolicy.lockReportingErrors(vault)
        context.note(ended ? "locked" : "was not unlocked")
        // The fill agent ends once no session it serves is live: let it look now.
        if context.configuration.usesFillAgent, let agent = FillAgentClient(environment: context.io.environment) { _ = agent.send(.check) }
        return .success
    }
}

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

/// Durations as users type them: `90`, `90s`, `15m`, `2h`, `1d`.
enum Duration {
    static func parse(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = text
        var unit = 1.0
        if let last = text.last, let multiplier = units[last] {
            unit = multiplier
            number.removeLast()
        }
        guard let value = Double(number), value > 0, value * unit <= 7 * 86400 else {
            throw UsageError("'\(text)' is not a duration between 1s and 7d (e.g. 90s, 15m, 2h)")
        }
        return value * unit
    }

    static func format(_ seconds: TimeInterval) -> String {
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h\(total % 3600 / 60 > 0 ? "\(total % 3600 / 60)m" : "")" }
        if total >= 60 { return "\(total / 60)m\(total % 60 > 0 ? "\(total % 60)s" : "")" }
        return "\(total)s"
    }
}
