import Coffer

struct AddCommand: Command {
    static let name = "add"
    static let aliases = ["insert"]
    static let summary = "add a credential"
    static let usage = "add SERVICE [USER] [--generate[=LENGTH]] [--notes TEXT] [--match site|host|exact|never]"
    static let discussion = """
        SERVICE is a domain (example.com) or a URL (https://example.com/login). The password is
        asked twice on the terminal, or read from the next line of standard input (after the
        master password when --password-stdin is used). --generate makes one instead. Prints the
        new credential's id.
        """
    static let examples = [
        "coffer add github.com alice",
        "coffer add https://mail.example.com bob --generate=24",
        "printf '%s\\n' \"$MASTER\" \"$PW\" | coffer add example.com carol --password-stdin",
    ]
    static let options: [OptionSpec] = [
        .optionalValue("generate", "generate a password of LENGTH characters (default 20)"),
        .value("notes", "free-text notes stored with the credential"),
        .value("match", MatchModeOption.help),
        .flag("json", "print the new credential's identity as JSON"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(1...2, names: "SERVICE")
        let service = CredentialServiceIdentifier(parsing: operands[0])
        let user = operands.count > 1 ? operands[1] : ""
        let mode = try MatchModeOption.parse(context.arguments.value("match")) ?? .host
        let vault = try context.unlockedVault()
        let password: String
        if context.arguments.has("generate") {
            password = try GenerateCommand.generate(lengthText: context.arguments.value("generate"), style: "chars").password
        } else {
            password = try context.newSecret(prompt: "Password for \(service): ", confirm: "Repeat password: ").unsafeString()
        }
        let record = try vault.add(RecordDraft(
            serviceIdentifiers: [service], user: user, password: password, notes: context.arguments.value("notes") ?? "",
            matchMode: mode))
        if context.wantsJSON {
            context.print(JSONOutput.render(ShowCommand.identityJSON(record)))
        } else {
            context.print(record.id.hex)
        }
        return .success
    }
}
