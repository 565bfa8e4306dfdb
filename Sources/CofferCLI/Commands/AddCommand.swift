import Coffer

struct AddCommand: Command {
    static let name = "add"
    static let aliases = ["insert"]
    static let summary = "add a login, note, card or other item"
    static let usage = "add [SERVICE] [USER] [--name NAME] [--kind KIND] [--tag TAG]... [--otp] [--generate[=LENGTH]] [--match MODE]"
    static let discussion = """
        SERVICE is a domain (example.com) or a URL (https://example.com/login); an item without
        one (a note, a card, a login for no site) needs --name. A login's password is asked twice
        on the terminal, or read from the next line of standard input (after the master password
        when --password-stdin is used); --generate makes one instead. Other kinds have no
        password unless --generate. --otp then reads the one-time-code secret (an otpauth:// URI
        or a base32 secret) the same way: never from the command line. Prints the new item's id.
        """
    static let examples = [
        "coffer add github.com alice --name GitHub --tag work --otp",
        "coffer add https://mail.example.com bob --generate=24",
        "coffer add --name 'Wi-Fi at home' --kind note   # then 'coffer edit' for its text",
        "printf '%s\\n' \"$MASTER\" \"$PW\" | coffer add example.com carol --password-stdin",
    ]
    static let options: [OptionSpec] = [
        .value("name", "the item's name (how 'coffer show NAME' finds it)"),
        .value("kind", "login (default), note, card, identity or ssh-key"),
        .value("tag", "a tag; repeat for more"),
        .flag("otp", "read a one-time-code secret (otpauth:// URI or base32) after the password"),
        .optionalValue("generate", "generate a password of LENGTH characters (default 20)"),
        .value("match", MatchModeOption.help),
        .flag("json", "print the new item as JSON {\"id\", \"name\", \"kind\", ...}"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...2, names: "SERVICE")
        let arguments = context.arguments
        let name = arguments.value("name") ?? ""
        guard !operands.isEmpty || !name.isEmpty else { throw UsageError("missing SERVICE (or --name for an item without one)") }
        let kind = try parseKind(arguments.value("kind")) ?? .login
        let services = operands.first.map { [CredentialServiceIdentifier(parsing: $0)] } ?? []
        let user = operands.count > 1 ? operands[1] : ""
        let mode = try MatchModeOption.parse(arguments.value("match")) ?? .host
        let vault = try context.unlockedVault()
        let title = name.isEmpty ? services.first?.identifier ?? "" : name
        var password = ""
        if arguments.has("generate") {
            password = try GenerateCommand.generate(lengthText: arguments.value("generate"), style: "chars").password
        } else if kind == .login {
            password = try context.newSecret(prompt: "Password for \(title): ", confirm: "Repeat password: ").unsafeString()
        }
        let otp = arguments.has("otp") ? try context.oneTimeCodeSecret(account: user.isEmpty ? title : user) : nil
        let record = try vault.add(RecordDraft(
            serviceIdentifiers: services, user: user, password: password,
            matchMode: mode, name: name, kind: kind, tags: arguments.values("tag"), otp: otp))
        if context.wantsJSON {
            context.print(JSONOutput.render(JSONOutput.summary(record)))
        } else {
            context.print(record.id.hex)
        }
        return .success
    }

    static func parseKind(_ text: String?) throws -> ItemKind? {
        guard let text else { return nil }
        guard let kind = ItemKind(rawValue: text) else {
            throw UsageError("--kind must be one of \(ItemKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }
}
