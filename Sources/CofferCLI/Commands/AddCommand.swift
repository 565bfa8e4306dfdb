import Coffer
import CofferTerminalKit

struct AddCommand: Command {
    static let name = "add"
    static let changesVault = true
    static let aliases = ["insert"]
    static let summary = "add a login, note, card or other item"
    static let usage = "add [SERVICE] [USER] [--team TEAM] [--name NAME] [--kind KIND] [--tag TAG]... [--otp] [--generate[=LENGTH] [--clip] [--show]] [--match MODE] [--force | --duplicate]"
    static let discussion = """
        SERVICE is a domain (example.com) or a URL (https://example.com/login); an item without
        one (a note, a card, a login for no site) needs --name. A card's and an identity's
        members (number, expiry, address...) are written as 'key: value' lines, the keys of
        'coffer show': in the editor on a terminal, else from the rest of standard input. A login's password is asked twice
        on the terminal, or read from the next line of standard input (after the master password
        when --password-stdin is used); --generate makes one instead. Other kinds have no
        password unless --generate; a note reads its body from the rest of standard input when
        that is not a terminal. --otp then reads the one-time-code secret (an otpauth:// URI
        or a base32 secret) the same way: never from the command line. Prints the new item's id.
        A login for a service and user already stored is not added twice: on a terminal you are
        asked whether to update its password; without one, --force updates it and --duplicate adds
        another. With --generate, --clip copies the new password and --show prints it. --team
        writes the item into a team you belong to ('coffer team list'); its members see it.
        """
    static let examples = [
        "coffer add github.com alice --name GitHub --tag work --otp",
        "coffer add https://mail.example.com bob --generate=24",
        "coffer add --name 'Wi-Fi at home' --kind note < wifi.txt   # the body from stdin",
        "printf 'number: 4111 1111 1111 1111\\nexpiry: 07/29\\n' | coffer add --name 'Visa' --kind card",
        "printf '%s\\n' \"$MASTER\" \"$PW\" | coffer add example.com carol --password-stdin",
    ]
    static let options: [OptionSpec] = [
        .value("name", "the item's name (how 'coffer show NAME' finds it)"),
        .value("team", "write the item into this team's vault"),
        .value("kind", "login (default), note, card, identity or ssh-key"),
        .value("tag", "a tag; repeat for more"),
        .flag("otp", "read a one-time-code secret (otpauth:// URI or base32) after the password"),
        .optionalValue("generate", "generate a password of LENGTH characters (default 20)"),
        .flag("clip", "with --generate: copy the new password to the clipboard"),
        .flag("show", "with --generate: print the new password"),
        .flag("force", "update the password of the login already stored for SERVICE and USER"),
        .flag("duplicate", "add another login although one exists for SERVICE and USER"),
        .value("match", MatchModeOption.help),
        .flag("json", "print the new item as JSON {\"id\", \"name\", \"kind\", ...}"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...2, names: "SERVICE")
        let arguments = context.arguments
        if let team = arguments.value("team") { try context.useTeam(team) }
        let name = arguments.value("name") ?? ""
        guard !operands.isEmpty || !name.isEmpty else { throw UsageError("missing SERVICE (or --name for an item without one)") }
        let kind = try arguments.value("kind").map(ItemRules.kind) ?? .login
        let services = try operands.first.map { [try ItemRules.service($0)] } ?? []
        let user = operands.count > 1 ? operands[1] : ""
        let mode = try MatchModeOption.parse(arguments.value("match")) ?? .host
        let vault = try context.unlockedVault()
        let title = name.isEmpty ? services.first?.identifier ?? "" : name
        let existing = try existingLogin(services.first, user: user, in: vault, context)  // asked before any secret is typed
        var password = ""
        if arguments.has("generate") {
            password = try GenerateCommand.generate(lengthText: arguments.value("generate"), style: "chars").password
        } else if kind == .login {
            password = try context.newSecret(prompt: "Password for \(title): ", confirm: "Repeat password: ").unsafeString()
        }
        let otp = arguments.has("otp") ? try context.oneTimeCodeSecret(account: user.isEmpty ? title : user) : nil
        // A note's body: the rest of standard input when it is not a terminal (after the master
        // password with --password-stdin), as 'pass insert -m' reads one.
        var notes = ""
        if kind == .note, context.valueTerminal == nil {
            let body = context.io.standardInput.readRemainingBytes(limit: Self.maximumNoteLength + 1)
            guard body.count <= Self.maximumNoteLength else { throw CLIError("the note is longer than 1 MiB", code: .usage) }
            notes = String(decoding: body, as: UTF8.self)
            if notes.hasSuffix("\n") { notes.removeLast() }
        }
        var content = ItemContent(
            kind: kind, name: name, user: user, password: password, services: services, tags: arguments.values("tag"),
            matchMode: mode, otp: otp, notes: notes)
        if kind == .card || kind == .identity { content = try members(of: content, context) }
        if let existing {
            let updated = try vault.updateItem(withID: existing, applying: [.password(password)] + (otp.map { [.otp($0)] } ?? []))
            context.note("updated the password of \(user.isEmpty ? "" : user + "@")\(services[0].identifier) (\(updated.id.hex.prefix(8)))")
            if arguments.has("generate"), try GenerateCommand.reveal(password, context) == false, arguments.has("show") { context.print(password) }
            return .success
        }
        let record = try vault.addItem(content)
        if arguments.has("generate") {
            if try GenerateCommand.reveal(password, context) == false, arguments.has("show") { context.print(password) }
        }
        if context.wantsJSON {
            context.print(JSONOutput.render(JSONOutput.summary(record)))
        } else {
            context.print(record.id.hex)
        }
        return .success
    }

    static let maximumNoteLength = 1 << 20

    /// A new card's or identity's members, as 'key: value' lines of its text (SPEC.md §10.2): in
    /// the editor on a terminal, opened on the template of its kind (reopened with the error when
    /// it does not parse); else the rest of standard input, read after what is already given.
    static func members(of content: ItemContent, _ context: CommandContext) throws -> ItemContent {
        let given = ItemDocument(content: content)
        if let terminal = context.valueTerminal {
            let session = EditorSession(environment: context.io.environment)
            var draft = given.text(template: true)
            while true {
                guard let edited = try session.edit(draft) else { throw CLIError("the editor failed; nothing was added", code: .osError) }
                do { return try ItemDocument(parsing: edited, editing: given).content } catch {
                    terminal.write("coffer: \(error)\n")
                    guard terminal.readLine(prompt: "Edit again? [Y/n] ")?.lowercased() != "n" else { throw CLIError("nothing was added", code: .failure) }
                    draft = edited
                }
            }
        }
        var text = given.text()
        text.removeLast()  // the blank line before the (empty) notes: the lines read go on the members
        let givenLines = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        var lines = 0
        while let line = context.io.standardInput.readTextLine() {
            lines += 1
            guard lines <= 1000, text.utf8.count <= maximumNoteLength else { throw CLIError("more than 1 MiB of lines on standard input", code: .usage) }
            text += line + "\n"
        }
        do { return try ItemDocument(parsing: text, editing: given).content } catch {
            let place = error.line > givenLines ? "standard input line \(error.line - givenLines): " : ""
            throw CLIError("\(place)\(error.reason); nothing was added", code: .usage)
        }
    }

    /// The login already stored for the same service (host level) and user, when adding another
    /// would be a silent duplicate: updated with --force or a yes on the terminal; refused
    /// without either; `nil` to add (none exists, or --duplicate).
    static func existingLogin(_ service: CredentialServiceIdentifier?, user: String, in vault: Vault, _ context: CommandContext) throws -> RecordID? {
        guard let service, !context.arguments.has("duplicate") else { return nil }
        guard let match = try vault.identityStore.credentialIdentities(for: [service], minimumLevel: .host)
            .first(where: { $0.identity.user == user && $0.allowsAutomaticFill }),
            let id = try? RecordID(hex: match.identity.recordIdentifier)
        else { return nil }
        if context.arguments.has("force") { return id }
        let login = "\(user.isEmpty ? "" : user + "@")\(match.identity.serviceIdentifier.identifier)"
        guard let terminal = context.terminal else {
            throw CLIError("\(login) is already stored (\(id.hex.prefix(8)))", hint: "--force updates its password, --duplicate adds another", code: .usage)
        }
        guard let answer = terminal.readLine(prompt: "\(login) is already stored. Update its password? [y/N] "),
              ["y", "yes"].contains(answer.lowercased())
        else { throw CLIError("nothing was added", hint: "--duplicate adds another login for it", code: .failure) }
        return id
    }
}
