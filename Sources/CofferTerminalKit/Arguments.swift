import CofferProvider
import CofferHostKit
/// One option a command accepts.
package struct OptionSpec {
    package enum Kind { case flag, value, optionalValue }
    package let name: String  // without the leading dashes
    package let kind: Kind
    package let help: String

    package static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, kind: .flag, help: help) }
    package static func value(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, kind: .value, help: help) }
    package static func optionalValue(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, kind: .optionalValue, help: help)
    }

    /// The one-letter spellings pass, gopass and rbw users type, for the options that exist.
    package static let shortNames: [(letter: Character, name: String)] = [
        ("c", "clip"), ("j", "json"), ("u", "user"), ("n", "no-interaction"), ("f", "force"), ("q", "qr"),
        ("i", "in"), ("o", "out"),
    ]

    package var short: Character? { Self.shortNames.first { $0.name == name }?.letter }

    package var synopsis: String {
        let long = switch kind {
        case .flag: "--\(name)"
        case .value: "--\(name) VALUE"
        case .optionalValue: "--\(name)[=VALUE]"
        }
        return short.map { "-\($0), " + long } ?? long
    }
}

/// Options every command understands (where they make sense).
package enum GlobalOptions {
    package static let all: [OptionSpec] = [
        .value("container", "use the vault in this directory"),
        .value("group", "use the container of this group identifier"),
        .flag("password-stdin", "read the master password from the first line of stdin"),
        .value("password-file", "read the master password from the first line of FILE (/dev/fd/3 works)"),
        .flag("no-interaction", "never prompt; exit 75 when the vault is locked"),
        .flag("accept-rollback", "accept a vault older than one this device has seen (a restored backup)"),
        .flag("help", "show help for this command"),
    ]
}

/// A usage error: wrong options or operands. Exit code 64.
package struct UsageError: Error {
    package let message: String
    package init(_ message: String) { self.message = message }
}

/// The parsed command line of one command. Options are few: lists, not hash tables (see
/// `Environment` for why a command avoids its first `String`-keyed `Dictionary`).
package struct ParsedArguments {
    package var positionals: [String] = []
    /// In command-line order; a later `--name value` wins.
    private var values: [(name: String, value: String)] = []
    private var flags: [String] = []

    package func has(_ flag: String) -> Bool { flags.contains(flag) || value(flag) != nil }
    package func value(_ name: String) -> String? { values.last { $0.name == name }?.value }
    /// Every value of a repeatable option (`--tag a --tag b`), in order.
    package func values(_ name: String) -> [String] { values.filter { $0.name == name }.map(\.value) }

    /// Parses `--name`, `--name=value`, `--name value` and `--` against `specs`.
    /// Options people try to give a password with (`--password x`, from other managers' CLIs).
    package static let passwordOnArgv: Set<String> = ["password", "pass", "pw", "passwd", "master-password", "secret"]

    package static func parse(_ arguments: [String], specs: [OptionSpec]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            if argument == "-h" { parsed.flags.append("help"); continue }
            if !argument.hasPrefix("--") {
                // -c, -cj, -u alice: short flags may be clustered; a value option comes last.
                let letters = Array(argument.dropFirst())
                for (position, letter) in letters.enumerated() {
                    guard let spec = specs.first(where: { $0.short == letter }) else {
                        throw UsageError("unknown option '-\(letter)'")
                    }
                    if spec.kind == .value {
                        guard position == letters.count - 1, index < arguments.count else {
                            throw UsageError("option '-\(letter)' needs a value")
                        }
                        parsed.values.append((spec.name, arguments[index]))
                        index += 1
                    } else {
                        parsed.flags.append(spec.name)
                    }
                }
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let spec = specs.first(where: { $0.name == name }) else {
                if Self.passwordOnArgv.contains(name.lowercased()) {
                    // What a person leaving another manager tries first: say where it goes.
                    throw UsageError("no password is taken on the command line (every process could read it, and your shell's history keeps it): "
                        + "give it at the prompt, or on standard input after the master password with --password-stdin "
                        + "(printf '%s\\n' \"$MASTER\" \"$PW\" | coffer add SITE USER --password-stdin)")
                }
                let hint = Suggestion.closest(to: name, among: specs.map(\.name)).map { " (did you mean '--\($0)'?)" } ?? ""
                throw UsageError("unknown option '--\(name)'\(hint)")
            }
            switch spec.kind {
            case .flag:
                guard inlineValue == nil else { throw UsageError("option '--\(name)' takes no value") }
                parsed.flags.append(name)
            case .optionalValue:
                if let inlineValue { parsed.values.append((name, inlineValue)) } else { parsed.flags.append(name) }
            case .value:
                if let inlineValue {
                    parsed.values.append((name, inlineValue))
                } else {
                    guard index < arguments.count else { throw UsageError("option '--\(name)' needs a value") }
                    parsed.values.append((name, arguments[index]))
                    index += 1
                }
            }
        }
        return parsed
    }
}

/// "did you mean …?" by edit distance, ignoring case (`Github` finds `GitHub`).
package enum Suggestion {
    package static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = candidates.map { ($0, distance(lowered, $0.lowercased())) }.filter { $0.1 <= max(1, word.count / 3) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    package static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var beforePrevious = previous
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)  // a transposition
                }
            }
            beforePrevious = previous
            previous = current
        }
        return previous[b.count]
    }
}
