import Coffer

struct EditCommand: Command {
    static let name = "edit"
    static let summary = "change a credential's user, password, notes or services"
    static let usage = "edit ID [--user USER] [--new-password | --generate[=LENGTH]] [--notes TEXT] [--add-service S] [--remove-service S] [--match MODE]"
    static let discussion = """
        Changes only what you name; the revision goes up by one. --new-password asks for the new
        password twice on the terminal, or reads it from the next line of standard input (after
        the master password with --password-stdin). The identity store follows the change.
        """
    static let examples = [
        "coffer edit 3fa1c0… --user alice@example.com", "coffer edit 3fa1c0… --generate=32",
        "coffer edit 3fa1c0… --add-service https://login.example.com",
    ]
    static let options: [OptionSpec] = [
        .value("user", "the new user name"),
        .flag("new-password", "ask for (or read) a new password"),
        .optionalValue("generate", "generate a new password of LENGTH characters (default 20)"),
        .value("notes", "replace the notes"),
        .value("add-service", "add a service (domain or URL)"),
        .value("remove-service", "remove a service"),
        .value("match", MatchModeOption.help),
        .flag("json", "print the edited credential's identity as JSON"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let id = try ShowCommand.recordID(try context.positionals(1...1, names: "ID")[0])
        let arguments = context.arguments
        guard ["user", "new-password", "generate", "notes", "add-service", "remove-service", "match"].contains(where: arguments.has) else {
            throw UsageError("nothing to change: name at least one of --user, --new-password, --generate, --notes, --add-service, --remove-service, --match")
        }
        let mode = try MatchModeOption.parse(arguments.value("match"))
        guard !(arguments.has("new-password") && arguments.has("generate")) else {
            throw UsageError("--new-password and --generate exclude each other")
        }
        let vault = try context.unlockedVault()
        var password: String?
        if arguments.has("generate") {
            password = try GenerateCommand.generate(lengthText: arguments.value("generate"), style: "chars").password
        } else if arguments.has("new-password") {
            password = try context.newSecret(prompt: "New password: ", confirm: "Repeat new password: ").unsafeString()
        }
        let removed = arguments.value("remove-service").map(CredentialServiceIdentifier.init(parsing:))
        let added = arguments.value("add-service").map(CredentialServiceIdentifier.init(parsing:))
        let record = try vault.updateRecord(withID: id) { record in
            if let user = arguments.value("user") { record.user = user }
            if let password { record.password = password }
            if let notes = arguments.value("notes") { record.notes = notes }
            if let mode { record.matchMode = mode }
            if let removed {
                guard record.serviceIdentifiers.contains(removed) else {
                    throw VaultError.invalidInput("the credential has no service \(removed)")
                }
                record.serviceIdentifiers.removeAll { $0 == removed }
            }
            if let added, !record.serviceIdentifiers.contains(added) { record.serviceIdentifiers.append(added) }
            guard !record.serviceIdentifiers.isEmpty else { throw VaultError.invalidInput("a credential needs at least one service") }
        }
        if context.wantsJSON {
            context.print(JSONOutput.render(ShowCommand.identityJSON(record)))
        } else {
            context.note("updated \(record.id) to revision \(record.revision)")
        }
        return .success
    }
}
