import Coffer
import CofferTerminalKit
import FoundationEssentials

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
