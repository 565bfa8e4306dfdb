import Coffer
import CofferTerminalKit

/// `coffer move ENTRY --team NAME`: an item from one's own vault into a team, or back.
struct MoveCommand: Command {
    static let name = "move"
    static let aliases = ["mv"]
    static let changesVault = true
    static let summary = "move an item into a team's vault (or from a team into yours)"
    static let usage = "move [TEAM:]ENTRY (--team NAME | --personal)"
    static let discussion = """
        Copies the item, every member, its password history and its attachments, into the other vault and then
        deletes it where it was: a crash in between leaves it in both, never in neither. The
        item gets a new id there. Moving it out of a team does not take it from members who
        already synced it: change its password if they should no longer have it.
        """
    static let examples = ["coffer move github.com/deploy --team ops", "coffer move ops:github.com/deploy --personal"]
    static let options: [OptionSpec] = [
        .value("team", "the team to move the item into"), .flag("personal", "move the item into your own vault"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = context.scoped(try context.positionals(1...1, names: "ENTRY")[0])
        let target = context.arguments.value("team")
        guard (target != nil) != context.arguments.has("personal") else { throw UsageError("say where: --team NAME or --personal") }
        // One master password opens both sides: one's own vault, and the teams it opens.
        let (source, personal): (Vault, Vault) = try context.team.map { try TeamCommand.openTeam(context, $0) } ?? {
            let vault = try context.unlockedVault()
            return (vault, vault)
        }()
        let id = try EntryOperand.resolve(operand, in: source, context: context)
        let record = try source.record(withID: id)
        let destination = try target.map { try TeamCommand.openTeam(context, $0, personal: personal).0 } ?? personal
        guard destination.vaultID != source.vaultID else { throw UsageError("the item is already there") }
        let moved = try destination.add(RecordDraft(record))
        try destination.copyAttachments(record.attachments, from: source, to: moved.id)
        try source.deleteRecord(withID: id)
        context.note("moved '\(record.title)' into \(target.map { "team '\($0)'" } ?? "your own vault")")
        context.print(moved.id.hex)
        return .success
    }
}
