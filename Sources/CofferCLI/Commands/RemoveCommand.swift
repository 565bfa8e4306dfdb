import Coffer
import CofferTerminalKit

struct RemoveCommand: Command {
    static let name = "rm"
    static let changesVault = true
    static let aliases = ["remove", "delete"]
    static let summary = "delete an item"
    static let usage = "rm ENTRY [--force]"
    static let discussion = """
        ENTRY names the item (see 'coffer help show'). Asks for confirmation on a terminal; without
        one, --force is required. A full id deletes even a record that no longer decrypts.
        """
    static let examples = ["coffer rm GitHub", "coffer rm 3fa1 --force"]
    static let options: [OptionSpec] = [.flag("force", "do not ask for confirmation")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = context.scoped(try context.positionals(1...1, names: "ENTRY")[0])
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(operand, in: vault, context: context)
        if !context.arguments.has("force") {
            let record = try vault.record(withID: id)
            guard let terminal = context.terminal else {
                throw UsageError("refusing to delete without confirmation; pass --force")
            }
            let service = record.serviceIdentifiers.first?.identifier ?? "?"
            let answer = terminal.readLine(prompt: "Delete the credential for \(service) (\(record.user))? [y/N] ")
            guard let answer, ["y", "yes"].contains(answer.lowercased()) else {
                context.note("nothing deleted")
                return .failure
            }
        }
        try vault.deleteRecord(withID: id)
        return .success
    }
}
