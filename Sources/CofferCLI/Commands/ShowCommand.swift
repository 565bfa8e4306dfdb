import Coffer

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
        members as 'name: value' lines (custom fields in their order, notes last), as pass does,
        so 'coffer show ENTRY | head -1' is the password. --json prints the whole record document
        (SPEC.md §5.2). --qr draws the password as a QR code on the terminal (refused when
        standard output is not a terminal).
        """
    static let examples = ["coffer show GitHub", "coffer show 3fa1c0… --json | jq -r .password", "coffer show 'Wi-Fi at home' --qr"]
    static let options: [OptionSpec] = [
        .flag("json", "print the record document as one JSON object"),
        .flag("qr", "draw the password as a QR code on the terminal"),
        .flag("clip", "copy the password to the clipboard instead (cleared after $COFFER_CLIP_TIME, default 45 s, unless replaced meanwhile)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = try context.positionals(1...1, names: "ENTRY")[0]
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
            context.print(Self.text(of: record))
        }
        return .success
    }

    /// pass's shape: the password, then `name: value` lines (the fields in their order, hidden
    /// ones too: `show` is the explicit reveal), notes last since they may span lines.
    static func text(of record: Record) -> String {
        var lines = [record.password]
        if !record.name.isEmpty { lines.append("name: \(record.name)") }
        if record.kind != .login { lines.append("kind: \(record.kind.rawValue)") }
        lines.append("user: \(record.user)")
        lines += record.serviceIdentifiers.map { "service: \($0.identifier)" }
        if !record.tags.isEmpty { lines.append("tags: \(record.tags.joined(separator: ", "))") }
        lines += record.fields.map { "\($0.name): \($0.value)" }
        if let otp = record.otp { lines.append("otp: \(otp)") }
        if !record.passwordHistory.isEmpty { lines.append("password history: \(record.passwordHistory.count) (show --json)") }
        lines += ["id: \(record.id)", "revision: \(record.revision)", "modified: \(JSONOutput.date(record.modified))"]
        if !record.notes.isEmpty { lines.append("notes: \(record.notes)") }
        return lines.joined(separator: "\n")
    }


}
