import Coffer
import CofferTerminalKit

struct EditCommand: Command {
    static let name = "edit"
    static let changesVault = true
    static let summary = "change an item's name, user, password, notes, services, tags or one-time code"
    static let usage = "edit ENTRY [--name NAME] [--user USER] [--new-password | --generate[=LENGTH]] [--add-service S] [--remove-service S] [--tag T] [--remove-tag T] [--otp | --remove-otp] [--match MODE] [--unhide-passkey]"
    static let discussion = """
        ENTRY names the item (see 'coffer help show'). With no option, opens the item as text in
        $VISUAL or $EDITOR (then 'editor', then 'vi'), as pass edit does: the password on line 1,
        then 'key: value' lines (name, kind, user, one url per service, tags, match, custom fields
        — a hidden one as 'key (hidden): value', a new one as 'field key: value' —, otp), then
        the notes after a blank line. A key it does not know, a removed 'user' (a login) or
        'kind' line, or a value it cannot read is shown with its line and nothing is written. The
        file lives on a tmpfs, 0600, and is wiped and removed afterwards. Without a terminal the
        same text is read from standard input (after the master password with --password-stdin).
        With options, changes only what you name. The revision goes up by one, and a replaced
        password is kept in the item's password history (the last 20). --new-password asks for the
        new password twice on the terminal, or reads it from the next line of standard input;
        --otp reads a one-time-code secret the same way, after it.
        """
    static let examples = [
        "coffer edit GitHub", "coffer edit GitHub --user alice@example.com", "coffer edit 3fa1 --generate=32",
        "coffer edit GitHub --otp", "coffer edit GitHub --add-service https://login.example.com --tag work",
    ]
    static let options: [OptionSpec] = [
        .value("name", "the new name"),
        .value("user", "the new user name"),
        .flag("new-password", "ask for (or read) a new password"),
        .optionalValue("generate", "generate a new password of LENGTH characters (default 20)"),
        .flag("clip", "with --generate: copy the new password to the clipboard"),
        .flag("show", "with --generate: print the new password"),
        .value("add-service", "add a service (domain or URL); repeat for more"),
        .value("remove-service", "remove a service; repeat for more"),
        .value("tag", "add a tag; repeat for more"),
        .value("remove-tag", "remove a tag; repeat for more"),
        .flag("otp", "read a new one-time-code secret (otpauth:// URI or base32)"),
        .flag("remove-otp", "remove the one-time code"),
        .value("match", MatchModeOption.help),
        .flag("unhide-passkey", "offer the login's passkey again, which a site's signal hid ('show' says why)"),
        .flag("json", "print the edited item as JSON"),
    ]
    static let changes = [
        "name", "user", "new-password", "generate", "add-service", "remove-service", "tag", "remove-tag", "otp", "remove-otp", "match", "unhide-passkey",
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = context.scoped(try context.positionals(1...1, names: "ENTRY")[0])
        let arguments = context.arguments
        guard changes.contains(where: arguments.has) else { return try editAsText(operand, context) }
        let mode = try MatchModeOption.parse(arguments.value("match"))
        for (a, b) in [("new-password", "generate"), ("otp", "remove-otp")] where arguments.has(a) && arguments.has(b) {
            throw UsageError("--\(a) and --\(b) exclude each other")
        }
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(operand, in: vault, context: context)
        var password: String?
        if arguments.has("generate") {
            password = try GenerateCommand.generate(lengthText: arguments.value("generate"), style: "chars").password
        } else if arguments.has("new-password") {
            password = try context.newSecret(prompt: "New password: ", confirm: "Repeat new password: ").unsafeString()
        }
        let otp = arguments.has("otp") ? try context.oneTimeCodeSecret(account: arguments.value("user") ?? operand) : nil
        // Each option may be repeated: every service and tag named is added or removed, in order.
        var changes: [ItemChange] = []
        if let name = arguments.value("name") { changes.append(.name(name)) }
        if let user = arguments.value("user") { changes.append(.user(user)) }
        if let password { changes.append(.password(password)) }
        if let mode { changes.append(.matchMode(mode)) }
        changes += try arguments.values("remove-service").map { .removeService(try ItemRules.service($0)) }
        changes += try arguments.values("add-service").map { .addService(try ItemRules.service($0)) }
        changes += arguments.values("tag").map(ItemChange.addTag) + arguments.values("remove-tag").map(ItemChange.removeTag)
        if let otp { changes.append(.otp(otp)) }
        if arguments.has("remove-otp") { changes.append(.otp(nil)) }
        var unhidden: Record?
        if arguments.has("unhide-passkey") {
            let current = try vault.record(withID: id)
            guard current.passkey?.hidden != nil else { throw CLIError("'\(current.title)' has no hidden passkey", code: .failure) }
            unhidden = try vault.updateRecord(withID: id) { $0.passkey?.hidden = nil }
        }
        let record = try unhidden.flatMap { changes.isEmpty ? $0 : nil } ?? vault.updateItem(withID: id, applying: changes)
        if arguments.has("generate"), try GenerateCommand.reveal(record.password, context) == false, arguments.has("show") {
            context.print(record.password)
        }
        if context.wantsJSON {
            context.print(JSONOutput.render(JSONOutput.summary(record)))
        } else {
            context.note("updated \(record.id) to revision \(record.revision)")
        }
        return .success
    }

    /// The whole item as text: in the editor on a terminal (reopened with the error when it does
    /// not parse), else read from stdin. An unchanged text writes nothing.
    static func editAsText(_ operand: String, _ context: CommandContext) throws -> ExitCode {
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(operand, in: vault, context: context)
        let original = try vault.record(withID: id)
        let before = ItemDocument(original)
        let text = before.text(template: true)
        var document: ItemDocument
        if let terminal = context.valueTerminal {
            let session = EditorSession(environment: context.io.environment)
            var draft = text
            while true {
                guard let edited = try session.edit(draft) else { throw CLIError("the editor failed; nothing was changed", code: .osError) }
                guard edited != text else {
                    context.note("no change")
                    return .success
                }
                do {
                    document = try ItemDocument(parsing: edited, editing: before)
                    try document.check(isOf: id)
                    break
                } catch {
                    terminal.write("coffer: \(error)\n")
                    guard terminal.readLine(prompt: "Edit again? [Y/n] ")?.lowercased() != "n" else {
                        throw CLIError("nothing was changed", code: .failure)
                    }
                    draft = edited
                }
            }
        } else {
            var lines: [String] = []
            while let line = context.io.standardInput.readTextLine() { lines.append(line) }
            guard !lines.isEmpty else { throw UsageError("no terminal for an editor: give the item's text on standard input") }
            let edited = lines.joined(separator: "\n") + "\n"
            guard edited != text else {
                context.note("no change")
                return .success
            }
            do {
                document = try ItemDocument(parsing: edited, editing: before)
                try document.check(isOf: id)
            } catch { throw CLIError("\(error); nothing was changed", code: .usage) }
        }
        guard document.content != before.content else {  // the template's empty lines, or a text spelled otherwise
            context.note("no change")
            return .success
        }
        let record = try write(document.content, over: original, operand, vault, context)
        context.note("updated \(record.id) to revision \(record.revision)")
        return .success
    }

    /// Writes an edited item over the revision the person opened. When it changed meanwhile (a
    /// sync, another host), a person at a terminal is told which members changed and writes
    /// over it only on a yes; without one, nothing is written (`.editConflict`, exit 75).
    static func write(_ content: ItemContent, over original: Record, _ operand: String, _ vault: Vault, _ context: CommandContext) throws -> Record {
        do {
            return try vault.updateItem(withID: original.id, to: content, ifRevision: original.revision)
        } catch {
            guard case .editConflict(_, _, let current) = error, let terminal = context.valueTerminal else { throw error }
            let changed = ItemContent(original).changedMembers(in: ItemContent(try vault.record(withID: original.id))).map(\.rawValue)
            let names = changed.isEmpty ? "no member you edit" : changed.joined(separator: ", ")
            terminal.write("coffer: the item changed while you edited it (now revision \(current): \(names))\n")
            guard terminal.readLine(prompt: "Write your version over it? [y/N] ")?.lowercased() == "y" else {
                throw CLIError("nothing was changed", hint: "'coffer edit \(operand)' opens it as it is now", code: .failure)
            }
            return try vault.updateItem(withID: original.id, to: content, ifRevision: current)
        }
    }
}
