import Coffer
import CofferTerminalKit
import FoundationEssentials

struct GenerateCommand: Command {
    static let name = "generate"
    static let aliases = ["gen"]
    static let summary = "print a random password"
    static let usage = "generate [LENGTH] [--style chars|apple|words] [--no-symbols] [--rules RULES | --for SITE] [--save ENTRY] [--clip [--show]] [--json]"
    static let discussion = """
        Draws from libsodium's CSPRNG. 'chars' picks N characters with at least one of each class;
        'apple' makes Safari's xxxxxx-xxxxxx-xxxxxx; 'words' joins N words (default 6) from the
        system word list (/usr/share/dict/words, Debian's wamerican), 4 to 8 lowercase letters each.
        --rules takes a site's requirements in Apple's Password Rules language ('minlength: 8;
        maxlength: 16; required: lower; required: upper, digit'): the password is drawn uniformly
        from every one the rule accepts. --for SITE uses the rule Apple's Password Manager
        Resources publish for the site (a host or URL), else the default; a published rule that
        does not parse or cannot be met is warned about and the default used. --json adds the
        entropy in bits and the rule used. --clip copies it instead of printing it (--show prints
        it too), as pass generate does. --save ENTRY stores it: an existing entry gets it as its
        new password (the old one kept in its history); any other ENTRY is read as SERVICE or
        SERVICE/USER and a new login is added for it.
        """
    static let examples = [
        "coffer generate", "coffer generate 32 --no-symbols", "coffer generate --clip", "coffer generate --style apple --json",
        "coffer generate --style words --length 7", "coffer generate --rules 'minlength: 8; maxlength: 12; required: digit; allowed: lower'",
        "coffer generate --for https://www.example-bank.com/signup --json",
        "coffer generate 24 --save github.com/alice --clip",
    ]
    static let options: [OptionSpec] = [
        .value("length", "characters for chars (default 20), words for words (default 6)"),
        .value("style", "chars (default), apple (xxxxxx-xxxxxx-xxxxxx) or words"),
        .flag("no-symbols", "letters and digits only"),
        .value("rules", "the site's rule in Apple's Password Rules language"),
        .value("for", "the published rule for this site (host or URL), else the default"),
        .flag("json", "print {\"password\", \"entropyBits\"} (and \"rules\", \"rulesFrom\")"),
        .flag("clip", "copy it to the clipboard instead of printing it"),
        .flag("show", "print it even with --clip"),
        .value("save", "store it: the new password of ENTRY, or a new login for SERVICE[/USER]"),
    ]

    /// Only `--save` writes to the vault (and so has `COFFER_AUTOSYNC` sync after it).
    static func changesVault(_ arguments: ParsedArguments) -> Bool { arguments.has("save") }

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "LENGTH")
        guard operands.isEmpty || !context.arguments.has("length") else { throw UsageError("give the length once: LENGTH or --length") }
        let lengthText = operands.first ?? context.arguments.value("length")
        var classes = PasswordGenerator.CharacterClasses.all
        if context.arguments.has("no-symbols") { classes.remove(.symbols) }
        let ruled = try rulesAsked(context)
        if ruled != nil, context.arguments.has("style") || context.arguments.has("no-symbols") {
            throw UsageError("--rules and --for choose the characters; leave out --style and --no-symbols")
        }
        let generated: PasswordGenerator.Generated
        if let (rules, _) = ruled, let rules {
            let length = try lengthText.map { text in
                guard let number = Int(text) else { throw UsageError("the length must be a number") }
                return number
            }
            do { generated = try rules.generate(length: length) } catch let error as PasswordRulesError {
                throw UsageError("the rule cannot be met: \(error.reason)")
            }
        } else {
            generated = try generate(lengthText: lengthText, style: context.arguments.value("style") ?? "chars", classes: classes)
        }
        if let entry = context.arguments.value("save") { try save(generated.password, as: entry, context) }
        if try reveal(generated.password, context) { return .success }
        if context.wantsJSON {
            var object: JSONObject = ["password": .string(generated.password), "entropyBits": .double(generated.entropyBits)]
            if let (rules, from) = ruled {
                object["rules"] = rules.map { .string($0.description) } ?? .null
                object["rulesFrom"] = .string(from)
            }
            context.print(JSONOutput.render(.object(object)))
        } else {
            context.print(generated.password)
        }
        return .success
    }

    /// The rule `--rules` or `--for` asks for, and where it came from (`rules`, the domain whose
    /// published rule it is, or `default`); `nil` when neither was given. A rule typed with
    /// `--rules` that does not parse is a usage error; a published one falls back to the default
    /// with a warning, as a site's own `passwordrules` does in the browser (SPEC.md §12.1).
    static func rulesAsked(_ context: CommandContext) throws -> (PasswordRules?, String)? {
        if let text = context.arguments.value("rules") {
            guard !context.arguments.has("for") else { throw UsageError("give --rules or --for, not both") }
            do { return (try PasswordRules(parsing: text), "rules") } catch { throw UsageError("--rules: \(error.reason)") }
        }
        guard let site = context.arguments.value("for") else { return nil }
        let service = CredentialServiceIdentifier(identifier: site, type: site.contains("://") ? .URL : .domain)
        guard case let key = ServiceKey(parsing: service), !key.host.isEmpty, HostNames.canonicalHost(key.host) != nil else {
            throw UsageError("--for takes a host or URL, not '\(site)'")
        }
        let quirks = WebQuirks.installed(environment: context.io.environment)
        if quirks == nil { context.note("warning: the web's password rules are not installed (share/coffer/web-quirks); using the default") }
        let chosen = ChosenPasswordRule(pageRules: nil, host: key.host, quirks: quirks)
        for warning in chosen.warnings { context.note("warning: " + warning) }
        return (chosen.rules, chosen.source)
    }

    /// `--save ENTRY`: the new password of an entry that exists (the old one goes to its history),
    /// else a new login for ENTRY read as `SERVICE[/USER]`, as `pass generate NAME` stores one.
    static func save(_ password: String, as entry: String, _ context: CommandContext) throws {
        let operand = context.scoped(entry)
        let vault = try context.unlockedVault()
        if let id = try? EntryOperand.resolve(operand, in: vault, context: context) {
            let record = try vault.updateItem(withID: id, applying: [.password(password)])
            context.note("saved as the new password of \(record.title) (\(record.id.hex.prefix(8)), revision \(record.revision))")
            return
        }
        // A URL is a service whole; `host/user` is a service and a user, as ENTRY reads them.
        let slash = operand.contains("://") ? nil : operand.lastIndex(of: "/")
        let service = slash.map { String(operand[..<$0]) } ?? operand
        let user = slash.map { String(operand[operand.index(after: $0)...]) } ?? ""
        guard !service.isEmpty else { throw UsageError("--save takes an entry, or SERVICE[/USER] for a new login") }
        let record = try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: service)], user: user, password: password))
        context.note("saved as a new login for \(user.isEmpty ? "" : user + "@")\(service) (\(record.id.hex.prefix(8)))")
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
