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
/// The candidates come from the device's completion table (SPEC.md §7.6): both lists, sorted and
/// each once, built from the listing after a change and kept sealed, so a Tab reads one small
/// file and scans sorted text for its prefix instead of listing and ranking every identity.
/// Only what an ENTRY or SERVICE operand resolves is a candidate, and no candidate holds a
/// control character (a line break would forge a second candidate).
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

    private static func candidates(section number: Int, word: String, context: CommandContext) throws -> String {
        let table = try context.readingStore { try $0.completionTable(build: table(of:)) }
        return matches(in: section(number, of: table), prefix: word)
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

    /// The table: `u32 LE length ‖ entry candidates ‖ service candidates`, each list sorted lines
    /// (SPEC.md §7.6, version 2). Entry candidates: every row's name, and every identity's service
    /// and `HOST/USER` path; service candidates: every identity's service and, for a URL, its
    /// host (`coffer fill gitlab.com` fills a login saved as `https://gitlab.com/…`). An item
    /// row's `service` (a Secret Service item's collection, say) is no candidate: no ENTRY
    /// resolves it. A candidate holding a control character is left out.
    static func table(of listing: IdentityListing) -> [UInt8] {
        var entries: [UInt8] = [], services: [UInt8] = []
        func add(_ bytes: UnsafeBufferPointer<UInt8>, to list: inout [UInt8], user: UnsafeBufferPointer<UInt8>? = nil) {
            // A control character (C0, DEL or C1, as text for people escapes, SPEC.md §10) would
            // drive the terminal or split the candidate: the candidate is left out.
            guard !bytes.isEmpty, !DisplayText.needsEscaping(bytes), !(user.map(DisplayText.needsEscaping) ?? false) else { return }
            list += bytes
            if let user, !user.isEmpty { list.append(0x2F); list += user }
            list.append(0x0A)
        }
        listing.withUnsafeText { text in
            for row in listing.rows where row.entry != .oneTimeCode {
                add(UnsafeBufferPointer(rebasing: text[row.name]), to: &entries)
                guard row.entry != .item else { continue }
                let service = UnsafeBufferPointer(rebasing: text[row.identifier]), user = UnsafeBufferPointer(rebasing: text[row.user])
                let host = UnsafeBufferPointer(rebasing: text[IdentityListing.hostAndPort(of: row.identifier, in: text)])
                add(service, to: &entries)
                add(host, to: &entries, user: user)
                add(service, to: &services)
                if host.count != service.count { add(host, to: &services) }
            }
        }
        let sortedEntries = sortedUniqueLines(entries), sortedServices = sortedUniqueLines(services)
        let length = UInt32(sortedEntries.count)
        return [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)] + sortedEntries + sortedServices
    }

    /// C0 controls and DEL: a byte that could end a candidate's line or drive a terminal.

    /// The non-empty lines of `text`, sorted as bytes (word-wise over positions: a generic
    /// comparison of 150,000 substrings took 0.6 s), each once, each ending in LF.
    static func sortedUniqueLines(_ bytes: [UInt8]) -> [UInt8] {
        var lines: [(start: Int, end: Int)] = []
        var start = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            if index > start { lines.append((start, index)) }
            start = index + 1
        }
        if start < bytes.count { lines.append((start, bytes.count)) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 1)
        bytes.withUnsafeBufferPointer { buffer in
            let bytes = UnsafeRawBufferPointer(buffer)
            func compare(_ a: (start: Int, end: Int), _ b: (start: Int, end: Int)) -> Int {
                UnsafeRawBufferPointer(rebasing: bytes[a.start..<a.end]).lexicographicOrder(UnsafeRawBufferPointer(rebasing: bytes[b.start..<b.end]))
            }
            lines.sort { compare($0, $1) < 0 }
            var previous: (start: Int, end: Int)?
            for line in lines where previous.map({ compare($0, line) != 0 }) ?? true {
                output.append(contentsOf: buffer[line.start..<line.end])
                output.append(0x0A)
                previous = line
            }
        }
        return output
    }

    /// One list of the table (0 entries, 1 services); empty for a table that does not parse.
    static func section(_ number: Int, of table: [UInt8]) -> ArraySlice<UInt8> {
        guard table.count >= 4 else { return [] }
        let length = Int(table[0]) | Int(table[1]) << 8 | Int(table[2]) << 16 | Int(table[3]) << 24
        guard length <= table.count - 4 else { return [] }
        return number == 0 ? table[4..<4 + length] : table[(4 + length)...]
    }

    /// The lines of a sorted list that start with `prefix`: one contiguous run, found by binary
    /// search over the lines, so a Tab reads the matches and a few lines more.
    static func matches(in sorted: ArraySlice<UInt8>, prefix: String) -> String {
        let wanted = Array(prefix.utf8)
        func lineStart(_ position: Int) -> Int {
            var start = position
            while start > sorted.startIndex && sorted[start - 1] != 0x0A { start -= 1 }
            return start
        }
        func lineEnd(_ start: Int) -> Int { sorted[start...].firstIndex(of: 0x0A) ?? sorted.endIndex }
        // `low` and `high` are line starts; the first line not below `wanted` lies in low...high.
        var low = sorted.startIndex, high = sorted.endIndex
        while low < high {
            let middle = lineStart((low + high) / 2)
            let end = lineEnd(middle)
            if sorted[middle..<end].lexicographicallyPrecedes(wanted) { low = min(end + 1, sorted.endIndex) } else { high = middle }
        }
        var output: [UInt8] = []
        var start = low
        while start < sorted.endIndex {
            let end = lineEnd(start)
            guard sorted[start..<end].starts(with: wanted) else { break }
            output += sorted[start..<end]
            output.append(0x0A)
            start = end + 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}
