import Coffer

struct RemoveCommand: Command {
    static let name = "rm"
    static let aliases = ["remove", "delete"]
    static let summary = "delete a credential"
    static let usage = "rm ID [--force]"
    static let discussion = "Asks for confirmation on a terminal; without one, --force is required."
    static let examples = ["coffer rm 3fa1c0…", "coffer rm 3fa1c0… --force"]
    static let options: [OptionSpec] = [.flag("force", "do not ask for confirmation")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let id = try ShowCommand.recordID(try context.positionals(1...1, names: "ID")[0])
        let vault = try context.unlockedVault()
        let record = try vault.record(withID: id)
        if !context.arguments.has("force") {
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
