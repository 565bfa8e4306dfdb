import Coffer
import CofferTerminalKit
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
