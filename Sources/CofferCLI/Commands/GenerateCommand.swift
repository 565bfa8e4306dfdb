import Coffer
import FoundationEssentials

struct GenerateCommand: Command {
    static let name = "generate"
    static let aliases = ["gen"]
    static let summary = "print a random password"
    static let usage = "generate [LENGTH] [--style chars|apple|words] [--no-symbols] [--clip [--show]] [--json]"
    static let discussion = """
        Draws from libsodium's CSPRNG. 'chars' picks N characters with at least one of each class;
        'apple' makes Safari's xxxxxx-xxxxxx-xxxxxx; 'words' joins N words (default 6) from the
        system word list (/usr/share/dict/words, Debian's wamerican), 4 to 8 lowercase letters each.
        --json adds the entropy in bits. --clip copies it instead of printing it (--show prints it
        too), as pass generate does.
        """
    static let examples = [
        "coffer generate", "coffer generate 32 --no-symbols", "coffer generate --clip", "coffer generate --style apple --json",
        "coffer generate --style words --length 7",
    ]
    static let options: [OptionSpec] = [
        .value("length", "characters for chars (default 20), words for words (default 6)"),
        .value("style", "chars (default), apple (xxxxxx-xxxxxx-xxxxxx) or words"),
        .flag("no-symbols", "letters and digits only"),
        .flag("json", "print {\"password\", \"entropyBits\"}"),
        .flag("clip", "copy it to the clipboard instead of printing it"),
        .flag("show", "print it even with --clip"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "LENGTH")
        guard operands.isEmpty || !context.arguments.has("length") else { throw UsageError("give the length once: LENGTH or --length") }
        var classes = PasswordGenerator.CharacterClasses.all
        if context.arguments.has("no-symbols") { classes.remove(.symbols) }
        let generated = try generate(
            lengthText: operands.first ?? context.arguments.value("length"), style: context.arguments.value("style") ?? "chars", classes: classes)
        if try reveal(generated.password, context) { return .success }
        if context.wantsJSON {
            context.print(JSONOutput.render(["password": .string(generated.password), "entropyBits": .double(generated.entropyBits)]))
        } else {
            context.print(generated.password)
        }
        return .success
    }

    /// `--clip` copies a new password (and `--show` prints it too); `true` when that was all to do.
    static func reveal(_ password: String, _ context: CommandContext) throws -> Bool {
        guard context.arguments.has("clip") else { return false }
        let delay = try Clipboard.copy(password, io: context.io)
        context.note("copied the new password to the clipboard; it is cleared in \(delay) s")
        if context.arguments.has("show") { context.print(password) }
        return true
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
                throw CLIError("no word list at \(path)", hint: "install one: apt-get install wamerican", code: .unavailable)
            }
            let lines = String(decoding: bytes.prefix(16 << 20), as: UTF8.self).split(separator: "\n")
            return try PasswordGenerator.passphrase(words: count, from: PasswordGenerator.wordList(fromLines: lines))
        default:
            throw UsageError("unknown --style '\(style)'; use chars, apple or words")
        }
    }
}
