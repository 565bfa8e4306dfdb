import Coffer

/// `coffer __complete entry|service WORD`: what a shell's Tab offers after an ENTRY or SERVICE
/// operand — the names, SERVICE/USER paths and services that start with WORD, sorted and each
/// once. Hidden (not in the command table): only the completion scripts call it. It reads the
/// identity store as `coffer list` does (while locked too), never prompts, and hands the shell
/// only the matches, so no shell ever sorts or filters the whole vault.
enum CompletionCandidates {
    static let name = "__complete"

    static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration) -> Int32 {
        guard arguments.count == 2, let template = templates[arguments[0]] else {
            io.standardError("usage: coffer __complete entry|service WORD\n")
            return ExitCode.usage.rawValue
        }
        do {
            let parsed = try ParsedArguments.parse(["--no-interaction"], specs: GlobalOptions.all)
            let listing = try CommandContext(arguments: parsed, io: io, configuration: configuration).identityListing()
            io.standardOutput(matches(CommandContext.formatted(listing, template: template), prefix: arguments[1]))
            return 0
        } catch {
            return CLIError.from(error).code.rawValue  // a shell shows nothing; the reason is no candidate
        }
    }

    /// What each operand completes to: the templates of `coffer list --format`.
    static let templates = ["entry": "{name}\\n{path}\\n{service}", "service": "{service}"]

    /// The lines of `lines` that start with `prefix` (as bytes), sorted as bytes, each once.
    static func matches(_ lines: String, prefix: String) -> String {
        let wanted = Array(prefix.utf8)
        var found: [Substring.UTF8View] = []
        for line in lines.utf8.split(separator: 0x0A) where line.starts(with: wanted) { found.append(Substring(line).utf8) }
        found.sort { $0.lexicographicallyPrecedes($1) }
        var output: [UInt8] = []
        var previous: Substring.UTF8View?
        for line in found where previous.map({ !$0.elementsEqual(line) }) ?? true {
            output += line
            output.append(0x0A)
            previous = line
        }
        return String(decoding: output, as: UTF8.self)
    }
}
