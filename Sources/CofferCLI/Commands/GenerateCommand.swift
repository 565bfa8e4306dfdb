import Coffer
import FoundationEssentials

struct GenerateCommand: Command {
    static let name = "generate"
    static let aliases = ["gen"]
    static let summary = "print a random password"
    static let usage = "generate [--length N] [--style chars|apple|words] [--no-symbols] [--json]"
    static let discussion = """
        Draws from libsodium's CSPRNG. 'chars' picks N characters with at least one of each class;
        'apple' makes Safari's xxxxxx-xxxxxx-xxxxxx; 'words' joins N words (default 6) from the
        system word list (/usr/share/dict/words, Debian's wamerican), 4 to 8 lowercase letters each.
        --json adds the entropy in bits.
        """
    static let examples = [
        "coffer generate", "coffer generate --length 32 --no-symbols", "coffer generate --style apple --json",
        "coffer generate --style words --length 7",
    ]
    static let options: [OptionSpec] = [
        .value("length", "characters for chars (default 20), words for words (default 6)"),
        .value("style", "chars (default), apple (xxxxxx-xxxxxx-xxxxxx) or words"),
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
            context.print(JSONOutput.render(["password": .string(generated.password), "entropyBits": .double(generated.entropyBits)]))
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
        case "words":
            guard let count = Int(lengthText ?? "6") else { throw UsageError("the number of words must be a number") }
            let path = "/usr/share/dict/words"
            // A system file, usually a symlink to the chosen dictionary: read with Foundation.
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw CLIError("no word list at \(path)", hint: "install one: apt-get install wamerican")
            }
            let lines = String(decoding: bytes.prefix(16 << 20), as: UTF8.self).split(separator: "\n")
            return try PasswordGenerator.passphrase(words: count, from: PasswordGenerator.wordList(fromLines: lines))
        default:
            throw UsageError("unknown --style '\(style)'; use chars, apple or words")
        }
    }
}
