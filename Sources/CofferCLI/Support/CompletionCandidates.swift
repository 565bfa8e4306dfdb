import Coffer
import CofferTerminalKit

/// `coffer __complete entry|service|reference|team WORD`: what a shell's Tab offers after an
/// ENTRY, a SERVICE, a `coffer://` reference or a team's name — the candidates that start with
/// WORD (as the command will receive it: the scripts remove the shell's quoting first), sorted
/// and each once, one per line; the scripts quote them for the shell. Hidden (not in the
/// command table): only the completion scripts call it. It reads the identity store as
/// `coffer list` does (while locked too), never prompts, and hands the shell only the matches,
/// so no shell ever sorts or filters the whole vault.
///
/// The candidates come from the device's completion table (SPEC.md §7.6, `CompletionTable`):
/// every candidate sorted, in sealed chunks, brought up to date from the buckets a change
/// replaced, so a Tab opens one chunk instead of listing and ranking every identity. Only what
/// an ENTRY or SERVICE operand resolves is a candidate, and no candidate holds a control
/// character (a line break would forge a second candidate).
enum CompletionCandidates {
    static let name = "__complete"
    static let kinds = ["entry", "service", "reference", "team"]

    static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration) -> Int32 {
        guard arguments.count == 2, kinds.contains(arguments[0]) else {
            io.standardError("usage: coffer __complete \(kinds.joined(separator: "|")) WORD\n")
            return ExitCode.usage.rawValue
        }
        do {
            let parsed = try ParsedArguments.parse(["--no-interaction"], specs: GlobalOptions.all)
            let context = CommandContext(arguments: parsed, io: io, configuration: configuration)
            let word = arguments[1]
            switch arguments[0] {
            case "service": io.standardOutput(try candidates(section: 1, word: word, context: context))
            case "team": io.standardOutput(teamNames(startingWith: word, context: context))
            case "reference": io.standardOutput(try referenceCandidates(word, context: context))
            default: io.standardOutput(try entryCandidates(word, context: context))
            }
            return 0
        } catch {
            return CLIError.from(error).code.rawValue  // a shell shows nothing; the reason is no candidate
        }
    }

    /// ENTRY candidates for `word`: `TEAM:WORD` completes in that team's table (SPEC.md §16.6),
    /// each line `TEAM:…`; otherwise one's own entries and the `TEAM:` of matching teams.
    static func entryCandidates(_ word: String, context: CommandContext) throws -> String {
        let scoped = context.scoped(word)
        let found = try candidates(section: 0, word: scoped, context: context)
        if let team = context.team { return found.split(separator: "\n").map { team + ":" + $0 + "\n" }.joined() }
        return found + teamPrefixes(startingWith: word, context: context)
    }

    /// `coffer://ENTRY` or `NAME=coffer://ENTRY` (`run --env`, SPEC.md §10.1): the entries after
    /// the scheme, with the word's text before it kept; a word the scheme could still follow
    /// (`NAME=cof`) completes to the scheme.
    static func referenceCandidates(_ word: String, context: CommandContext) throws -> String {
        let scheme = SecretReference.scheme
        guard let range = word.firstRange(of: scheme) else {
            let name = word.firstIndex(of: "=").map { word[...$0] } ?? ""
            return scheme.hasPrefix(word.dropFirst(name.count)) ? name + scheme + "\n" : ""
        }
        let before = word[..<range.upperBound]
        return try entryCandidates(String(word[range.upperBound...]), context: context)
            .split(separator: "\n").map { before + $0 + "\n" }.joined()
    }

    private static func candidates(section number: UInt8, word: String, context: CommandContext) throws -> String {
        String(decoding: try context.readingStore { try $0.completionCandidates(section: number, prefix: word) }, as: UTF8.self)
    }

    /// `TEAM:` for each team on this device whose name starts as `word` does (a Tab then goes on
    /// inside that team).
    static func teamPrefixes(startingWith word: String, context: CommandContext) -> String {
        teamNames(startingWith: word, context: context).split(separator: "\n").map { $0 + ":\n" }.joined()
    }

    /// The names of this device's teams that start with `word` (`coffer team sync NAME`).
    static func teamNames(startingWith word: String, context: CommandContext) -> String {
        guard !word.contains(":"), let personal = try? context.container() else { return "" }
        return context.teams(ownedBy: personal).map(\.name).filter { $0.hasPrefix(word) }.sorted().map { $0 + "\n" }.joined()
    }
}
