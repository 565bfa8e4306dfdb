import Coffer

struct GenerateCommand: Command {
    static let name = "generate"
    static let aliases = ["gen"]
    static let summary = "print a random password"
    static let usage = "generate [--length N] [--style chars|apple] [--no-symbols] [--json]"
    static let examples = ["coffer generate", "coffer generate --length 32 --no-symbols", "coffer generate --style apple --json"]
    static let options: [OptionSpec] = [
        .value("length", "number of characters for --style chars (default 20)"),
        .value("style", "chars (default) or apple (xxxxxx-xxxxxx-xxxxxx)"),
        .flag("no-symbols", "letters and digits only"),
        .flag("json", "print {\"password\", \"entropyBits\"}"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        var classes = PasswordGenerator.CharacterClasses.all
        if context.arguments.has("no-symbols") { classes.remove(.symbols) }
        let generated = try generate(
            lengthText: context.arguments.value("length"), style: context.arguments.value("style") ?? "chars", classes: classes)
        if context.wantsJSON {
            context.print(JSONOutput.render(["password": generated.password, "entropyBits": generated.entropyBits]))
        } else {
            context.print(generated.password)
        }
        return .success
    }

    static func generate(
        lengthText: String?, style: String, classes: PasswordGenerator.CharacterClasses = .all
    ) throws -> PasswordGenerator.Generated {
        switch style {
        case "chars":
            guard let length = Int(lengthText ?? "20") else { throw UsageError("the length must be a number") }
            return try PasswordGenerator.characters(length: length, classes: classes)
        case "apple":
            return try PasswordGenerator.apple()
        default:
            throw UsageError("unknown --style '\(style)'; use chars or apple")
        }
    }
}
