import Coffer
import CofferTerminalKit

struct ShowCommand: Command {
    static let name = "show"
    static let aliases = ["get"]
    static let summary = "print an item (password on the first line)"
    static let usage = "show ENTRY [--json | --clip | --qr]"
    static let discussion = """
        ENTRY is, first match wins: a full id; a unique id prefix of 4+ hex digits; SERVICE/USER
        (github.com/alice); an item's name (any case); a SERVICE, matched as fill matches it.
        Several matches are offered as a numbered list on a terminal, else listed (exit 64).
        Prints the password on the first line, then the other
        members as 'key: value' lines (custom fields in their order; hidden ones masked on a
        terminal), then the notes after a blank line, as pass does: 'coffer show ENTRY | head -1'
        is the password, and 'coffer show ENTRY | coffer edit ENTRY' reads the same text back. --json prints the whole record document
        (SPEC.md §6.2). --qr draws the password as a QR code on the terminal (refused when
        standard output is not a terminal).
        """
    static let examples = ["coffer show GitHub", "coffer show 3fa1c0… --json | jq -r .password", "coffer show 'Wi-Fi at home' --qr"]
    static let options: [OptionSpec] = [
        .flag("json", "print the record document as one JSON object"),
        .flag("qr", "draw the password as a QR code on the terminal"),
        .flag("clip", "copy the password to the clipboard instead (cleared after $COFFER_CLIP_TIME, default 45 s, unless replaced meanwhile)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = context.scoped(try context.positionals(1...1, names: "ENTRY")[0])
        let vault = try context.unlockedVault()
        let record = try vault.record(withID: EntryOperand.resolve(operand, in: vault, context: context))
        if context.arguments.has("qr") {
            try QRCodeOutput.draw(record.password, context: context)
        } else if context.arguments.has("clip") {
            let delay = try Clipboard.copy(record.password, io: context.io)
            context.note("copied the password for \(record.user) to the clipboard; it is cleared in \(delay) s")
        } else if context.wantsJSON {
            context.print(JSONOutput.render(JSONOutput.record(record)))
        } else {
            // On a terminal the text is for the eye: masked, and no value may drive the terminal.
            // Through a pipe it is exact, for 'coffer edit' to read back.
            let terminal = context.io.standardOutputIsTerminal
            let text = Self.text(of: record, masked: terminal)
            context.print(terminal ? DisplayText.escaped(text, keepingLineBreaks: true) : text)
        }
        return .success
    }

    /// The item as text (SPEC.md §10.2), the same text `coffer edit` reads: hidden fields are
    /// masked when the text goes to a terminal, in full through a pipe.
    static func text(of record: Record, masked: Bool) -> String {
        var text = ItemDocument(record).text(masked: masked)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
