import Coffer
import CofferTerminalKit

/// `coffer fill`'s side of the fill agent (SPEC.md §8.5): ask it first, and where none runs but
/// a session is live, start one for the next fill.
struct FillAgentAccess {
    let context: CommandContext
    let client: FillAgentClient
    /// Whether the last ask found nobody listening.
    private(set) var foundAbsent = false

    /// `nil` where this run may not use the agent: it is off, this host runs commands in its own
    /// process, or the master password is supplied (then it must be read and checked here,
    /// SPEC.md §8.3) or a rollback is being accepted.
    init?(_ context: CommandContext) {
        guard context.configuration.usesFillAgent, context.configuration.sessions != nil, !context.suppliesMasterPassword,
              !context.arguments.has("accept-rollback"), let client = FillAgentClient(environment: context.io.environment)
        else { return nil }
        self.context = context
        self.client = client
    }

    /// The agent's silent fill of `service` in this run's container, or `nil`: fill here.
    mutating func fill(_ service: String, kind: AutoFillHost.FillKind) -> AutoFillHost.Result? {
        guard let container = try? context.container().absolutePath else { return nil }
        let request = FillAgentFill(container: container, environment: FillAgentFill.environment(from: context.io.environment),
                                    service: service, user: context.arguments.value("user"), kind: kind)
        switch client.send(.fill(request)) {
        case .reply(let reply): return reply.result
        case .absent:
            foundAbsent = true
            return nil
        case .unusable:
            return nil
        }
    }

    /// After a fill here that a live session answered, starts the agent (not waiting for it)
    /// when none was listening: a session begun elsewhere (a pinentry unlock by the browser
    /// host, an agent that ended) gets warm fills from the next one on.
    func startIfAbsent(after result: AutoFillHost.Result, unlocking vault: Vault) {
        guard foundAbsent, FillAgentReply(result) != nil, let sessions = context.configuration.sessions,
              case .unlocked? = try? sessions.status(for: vault.vaultID)
        else { return }
        let arguments = ["agent", "--socket", client.socketPath, "--container", vault.container.absolutePath]
        (try? BackgroundAgent.spawn(arguments, environment: context.io.environment))?.detach()
    }
}
