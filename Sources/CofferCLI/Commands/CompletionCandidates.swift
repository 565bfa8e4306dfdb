import Coffer
import Glibc

/// `coffer __complete entry|service WORD`: what a shell's Tab offers after an ENTRY or SERVICE
/// operand — the names, SERVICE/USER paths and services that start with WORD, sorted and each
/// once. Hidden (not in the command table): only the completion scripts call it. It reads the
/// identity store as `coffer list` does (while locked too), never prompts, and hands the shell
/// only the matches, so no shell ever sorts or filters the whole vault.
///
/// The candidates come from the device's completion table (SPEC.md §7.6): both lists, sorted and
/// each once, built from the listing after a change and kept sealed, so a Tab reads one small
/// file and scans sorted text for its prefix instead of listing and ranking every identity.
enum CompletionCandidates {
    static let name = "__complete"

    static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration) -> Int32 {
        guard arguments.count == 2, let template = templates[arguments[0]] else {
            io.standardError("usage: coffer __complete entry|service WORD\n")
            return ExitCode.usage.rawValue
        }
        do {
            let parsed = try ParsedArguments.parse(["--no-interaction"], specs: GlobalOptions.all)
            let context = CommandContext(arguments: parsed, io: io, configuration: configuration)
            let isEntry = template == templates["entry"]
            // `TEAM:WORD` completes in that team's table (SPEC.md §19.6), each line `TEAM:…`.
            let word = isEntry ? context.scoped(arguments[1]) : arguments[1]
            let table = try context.readingStore { try $0.completionTable(build: table(of:)) }
            let found = matches(in: section(isEntry ? 0 : 1, of: table), prefix: word)
            if let team = context.team {
                io.standardOutput(found.split(separator: "\n").map { team + ":" + $0 + "\n" }.joined())
            } else {
                io.standardOutput(found)
                if isEntry { io.standardOutput(teamPrefixes(startingWith: arguments[1], context: context)) }
            }
            return 0
        } catch {
            return CLIError.from(error).code.rawValue  // a shell shows nothing; the reason is no candidate
        }
    }

    /// `TEAM:` for each team on this device whose name starts as `word` does (a Tab then goes on
    /// inside that team).
    static func teamPrefixes(startingWith word: String, context: CommandContext) -> String {
        guard !word.contains(":"), let personal = try? context.container() else { return "" }
        return context.teams(ownedBy: personal)
            .map { $0.name + ":" }.filter { $0.hasPrefix(word) }.map { $0 + "\n" }.joined()
    }

    /// What each operand completes to: the templates of `coffer list --format`.
    static let templates = ["entry": "{name}\\n{path}\\n{service}", "service": "{service}"]

    /// The table: `u32 LE length ‖ entry candidates ‖ service candidates`, each list sorted lines.
    static func table(of listing: IdentityListing) -> [UInt8] {
        let entries = sortedUniqueLines(CommandContext.formatted(listing, template: templates["entry"]!))
        let services = sortedUniqueLines(CommandContext.formatted(listing, template: templates["service"]!))
        let length = UInt32(entries.count)
        return [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)] + entries + services
    }

    /// The non-empty lines of `text`, sorted as bytes (memcmp over positions: a generic
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
            let base = buffer.baseAddress!
            func compare(_ a: (start: Int, end: Int), _ b: (start: Int, end: Int)) -> Int32 {
                let (left, right) = (a.end - a.start, b.end - b.start)
                let order = memcmp(base + a.start, base + b.start, min(left, right))
                return order != 0 ? order : left < right ? -1 : left > right ? 1 : 0
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
