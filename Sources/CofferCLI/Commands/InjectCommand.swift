import Coffer
import CofferTerminalKit

/// `coffer inject`: a template with `{{ coffer://… }}` references made into the real file (as
/// `op inject`): a config file kept in git without its secrets. Every reference is resolved
/// before anything is written, so one that names nothing fails the run with nothing written.
struct InjectCommand: Command {
    static let name = "inject"
    static let summary = "copy a template, replacing {{ coffer://… }} references with their values"
    static let usage = "inject [-i TEMPLATE] [-o OUT [--force]]"
    static let discussion = """
        Reads TEMPLATE (default: standard input) and writes it to OUT (default: standard output)
        with every {{ coffer://ENTRY[/MEMBER] }} replaced by its value (references as 'coffer help
        run' describes them). OUT is written atomically with mode 0600 and never replaces an
        existing file unless --force; it holds the secrets in the clear, by your choice. Text that
        is not a reference, other {{ … }} included, is copied as it is. A reference that names
        nothing, or a locked vault with no way to ask, fails the whole run and writes nothing.
        """
    static let examples = ["coffer inject -i config.yml.tpl -o config.yml", "coffer inject < .env.tpl > .env"]
    static let options: [OptionSpec] = [
        .value("in", "the template (default: standard input); -i"),
        .value("out", "the file to write, 0600 (default: standard output); -o"),
        .flag("force", "replace OUT when it exists"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        // With --password-stdin the master password is the line before a template on stdin.
        var vault: Vault? = context.arguments.has("password-stdin") && !context.arguments.has("in")
            ? try context.sessionVault(requireUnlocked: true) : nil
        let template: [UInt8]
        if let path = context.arguments.value("in") {
            do { template = try FileSystem.standard.readUserFile(path, limit: 16 << 20) } catch {
                throw CLIError("cannot read \(path): \(error)", code: .noInput)
            }
        } else {
            template = context.io.standardInput.readRemainingBytes(limit: 16 << 20)
        }
        let pieces = Template.parse(String(decoding: template, as: UTF8.self))
        let references = try pieces.compactMap { piece -> SecretReference? in
            guard case .reference(let text) = piece else { return nil }
            return try SecretReference(text)
        }
        var values: [String] = []
        if !references.isEmpty {
            if vault == nil { vault = try context.sessionVault(requireUnlocked: true) }
            values = try references.map { try $0.value(in: vault!, context: context) }
        }
        var next = values.makeIterator()
        let output = pieces.map { piece in
            switch piece {
            case .text(let text): text
            case .reference: next.next() ?? ""
            }
        }.joined()
        if let path = context.arguments.value("out") {
            do {
                try FileSystem.standard.writeUserFileExclusively(Array(output.utf8), to: path, replacing: context.arguments.has("force"))
            } catch {
                guard error.isAlreadyExisting else { throw error }
                throw CLIError("\(path) exists", hint: "--force replaces it", code: .exists)
            }
            context.note("wrote \(path) (\(references.count) reference\(references.count == 1 ? "" : "s"), mode 0600)")
        } else {
            context.io.standardOutput(output)
        }
        return .success
    }

    /// A template as text and `{{ coffer://… }}` references (SPEC.md §10.1): inside the braces,
    /// optional spaces, the reference — everything up to the closing braces on the same line,
    /// spaces included, as `coffer run` reads one — then optional spaces.
    enum Template: Equatable {
        case text(String)
        case reference(String)

        static func parse(_ input: String) -> [Template] {
            let bytes = Array(input.utf8)
            let scheme = Array(SecretReference.scheme.utf8)
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
            func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
            var pieces: [Template] = []
            var copiedUpTo = 0, index = 0
            while index + 1 < bytes.count {
                guard bytes[index] == UInt8(ascii: "{"), bytes[index + 1] == UInt8(ascii: "{") else { index += 1; continue }
                var cursor = index + 2
                while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                guard bytes[cursor...].starts(with: scheme) else { index += 2; continue }
                let start = cursor
                while cursor < bytes.count, bytes[cursor] != 0x0A, !bytes[cursor...].starts(with: [UInt8(ascii: "}"), UInt8(ascii: "}")]) {
                    cursor += 1
                }
                guard cursor < bytes.count, bytes[cursor] != 0x0A else { index += 2; continue }  // no "}}" on this line
                var end = cursor
                while end > start, isSpace(bytes[end - 1]) { end -= 1 }
                pieces.append(.text(text(copiedUpTo..<index)))
                pieces.append(.reference(text(start..<end)))
                index = cursor + 2
                copiedUpTo = index
            }
            pieces.append(.text(text(copiedUpTo..<bytes.count)))
            return pieces
        }
    }
}
