import Coffer
import CofferTerminalKit
import FoundationEssentials

/// `coffer attachment list|get|rm`: an item's files (SPEC.md §6.7).
struct AttachmentCommand: Command {
    static let name = "attachment"
    static let aliases = ["attachments"]
    static let subcommands = ["list", "get", "rm"]
    static let summary = "list, save or remove an item's attached files"
    static let usage = "attachment list ENTRY [--json] | get ENTRY NAME [-o FILE [--force]] | rm ENTRY NAME"
    static let discussion = """
        'list' names the item's files with their sizes, media types and when they were added.
        'get' writes one to standard output, or to FILE (created 0600, atomically, never through
        a link, never over an existing file unless --force); every chunk is authenticated before
        it is written, and a file that differs in any byte from what was attached fails (exit 65)
        with nothing left at FILE. 'rm' removes one ('coffer attach' adds them).
        """
    static let examples = [
        "coffer attachment list GitHub", "coffer attachment get GitHub recovery-codes.pdf -o ~/codes.pdf",
        "coffer attachment get 'Home server' ssh_config > ~/.ssh/config.d/home", "coffer attachment rm GitHub old.pdf",
    ]
    static let options: [OptionSpec] = [
        .value("out", "the file to write (default: standard output); -o"),
        .flag("force", "replace FILE when it exists"),
        .flag("json", "list as JSON"),
    ]

    static func changesVault(_ arguments: ParsedArguments) -> Bool { arguments.positionals.first == "rm" }

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(2...3, names: "list, get or rm, then ENTRY (and NAME)")
        let entry = context.scoped(operands[1])  // first: `TEAM:ENTRY` says which vault opens
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(entry, in: vault, context: context)
        switch operands[0] {
        case "list":
            guard operands.count == 2 else { throw UsageError("'attachment list' takes ENTRY only") }
            let record = try vault.record(withID: id)
            if context.wantsJSON {
                context.print(JSONOutput.render(.array(record.attachments.map(JSONOutput.attachment))))
            } else {
                for attachment in record.attachments { context.print(Self.line(attachment)) }
            }
        case "get":
            guard operands.count == 3 else { throw UsageError("'attachment get' takes ENTRY and NAME") }
            if let path = context.arguments.value("out") {
                do {
                    try FileSystem.standard.writeUserFileStreaming(to: path, replacing: context.arguments.has("force")) { file in
                        try vault.readAttachment(named: operands[2], of: id) { try file.write($0) }
                    }
                } catch let error as StorageError where error.isAlreadyExisting {
                    throw CLIError("\(path) exists; nothing was written", hint: "--force replaces it", code: .exists)
                }
                context.note("saved '\(operands[2])' to \(path)")
            } else {
                if context.io.standardOutputIsTerminal, let attachment = try vault.record(withID: id).attachment(named: operands[2]),
                   !attachment.mediaType.hasPrefix("text/") {
                    throw UsageError("'\(operands[2])' is \(attachment.mediaType), not text: save it with -o FILE or redirect standard output")
                }
                try vault.readAttachment(named: operands[2], of: id) { bytes in
                    context.io.standardOutputBytes(bytes.bindMemory(to: UInt8.self))
                }
            }
        case "rm":
            guard operands.count == 3 else { throw UsageError("'attachment rm' takes ENTRY and NAME") }
            try vault.removeAttachment(named: operands[2], of: id)
            context.note("removed '\(operands[2])'")
        default:
            throw UsageError("expected list, get or rm, not '\(operands[0])'")
        }
        return .success
    }

    /// `NAME  SIZE  TYPE  added DATE`, the name escaped for the terminal.
    static func line(_ attachment: Attachment) -> String {
        DisplayText.escaped(attachment.name) + "  " + Attachment.describe(size: attachment.size) + "  " + attachment.mediaType + "  added "
            + JSONOutput.date(attachment.added)
    }
}
