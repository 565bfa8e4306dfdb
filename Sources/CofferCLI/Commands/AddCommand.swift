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
        one (a note, a card, a login for no site) needs --name. A login's password is asked twice
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
        if let existing {
            let updated = try vault.updateItem(withID: existing, applying: [.password(password)] + (otp.map { [.otp($0)] } ?? []))
            context.note("updated the password of \(user.isEmpty ? "" : user + "@")\(services[0].identifier) (\(updated.id.hex.prefix(8)))")
            if arguments.has("generate"), try GenerateCommand.reveal(password, context) == false, arguments.has("show") { context.print(password) }
            return .success
        }
        let record = try vault.addItem(ItemContent(
            kind: kind, name: name, user: user, password: password, services: services, tags: arguments.values("tag"),
            matchMode: mode, otp: otp, notes: notes))
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
