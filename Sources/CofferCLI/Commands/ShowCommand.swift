import Coffer

struct ShowCommand: Command {
    static let name = "show"
    static let aliases = ["get"]
    static let summary = "print a credential (password on the first line)"
    static let usage = "show ID [--json]"
    static let discussion = """
        Prints the password on the first line, then the other fields as 'name: value' lines, as
        pass does, so 'coffer show ID | head -1' is the password. --json prints one object.
        """
    static let examples = ["coffer show 3fa1c0…", "coffer show 3fa1c0… --json | jq -r .password"]
    static let options: [OptionSpec] = [
        .flag("json", "print one JSON object"),
        .flag("clip", "copy the password to the clipboard instead (cleared after $COFFER_CLIP_TIME, default 45 s, unless replaced meanwhile)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let id = try recordID(try context.positionals(1...1, names: "ID")[0])
        let record = try context.unlockedVault().record(withID: id)
        if context.arguments.has("clip") {
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

    /// Parses an id operand; a usage error names the expected spelling.
    static func recordID(_ text: String) throws -> RecordID {
        do { return try RecordID(hex: text) } catch {
            throw UsageError("'\(text.prefix(40))' is not a credential id (32 lowercase hex digits)")
        }
    }

    static func identityJSON(_ record: Record) -> JSONValue {
        JSONOutput.identity(PasswordCredentialIdentity(
            serviceIdentifier: record.serviceIdentifiers[0], user: record.user, recordIdentifier: record.id.hex))
    }
}
