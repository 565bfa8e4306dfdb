import Coffer
import CofferTerminalKit

/// `coffer run`: a command with secrets in its environment and nowhere else (as `op run`,
/// `gopass env`). The references are all resolved before the child starts, so a locked vault
/// with no way to ask, or a reference that names nothing, fails with the child never started.
struct RunCommand: Command {
    static let name = "run"
    static let summary = "run a command with secrets from the vault in its environment"
    static let usage = "run [--env NAME=coffer://ENTRY[/MEMBER]]… [--env-file FILE] [--mask|--no-mask] -- COMMAND [ARGS…]"
    static let discussion = """
        Sets each NAME to the value its reference names: coffer://ENTRY for the password,
        coffer://ENTRY/user, /otp (the current one-time code), /notes or /field/NAME (ENTRY as
        'coffer help show' describes it; %2F puts a slash into a name). --env-file reads NAME=REF
        lines (a .env template you can keep in git: blank lines and # comments are skipped, and a
        line whose value is not a coffer:// reference is passed on as it is). The values go only
        into COMMAND's environment: never its arguments, never a file. Coffer waits for COMMAND,
        passes on the signals sent to it, and exits with COMMAND's status (128+N when a signal
        ended it). With --mask (the default when standard output is a terminal) COMMAND's output
        and errors go through a pipe that replaces any of the values (4 bytes or longer) with
        <concealed by coffer>. A locked vault with no way to ask is exit 75, before COMMAND starts.
        """
    static let examples = [
        "coffer run --env GITHUB_TOKEN=coffer://github.com/alice -- gh repo list",
        "coffer run --env-file .env.coffer -- ./deploy.sh",
        "coffer run --env PGPASSWORD=coffer://db.example.com --env PGUSER=coffer://db.example.com/user -- psql",
    ]
    static let options: [OptionSpec] = [
        .value("env", "NAME=coffer://… (repeatable)"),
        .value("env-file", "a file of NAME=coffer://… lines"),
        .flag("mask", "conceal the values in COMMAND's output (default on a terminal)"),
        .flag("no-mask", "pass COMMAND's output through untouched"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let command = context.arguments.positionals
        guard !command.isEmpty else { throw UsageError("no command to run (put it after --)") }
        var assignments = try context.arguments.values("env").map { try Assignment(parsing: $0, origin: "--env") }
        if let file = context.arguments.value("env-file") { assignments += try Assignment.read(file) }
        guard !assignments.isEmpty else { throw UsageError("nothing to set: give --env NAME=coffer://… or --env-file FILE") }

        var values: [String] = []
        if assignments.contains(where: { $0.reference != nil }) {
            let vault = try context.sessionVault(requireUnlocked: true)
            values = try assignments.map { try $0.reference?.value(in: vault, context: context) ?? $0.literal }
        } else {
            values = assignments.map(\.literal)
        }
        let names = assignments.map(\.name)
        var environment = context.io.environment.variables.filter { !names.contains($0.name) }.map { "\($0.name)=\($0.value)" }
        environment += zip(names, values).map { "\($0)=\($1)" }

        let mask = context.arguments.has("no-mask") ? false : context.arguments.has("mask") || context.io.standardOutputIsTerminal
        let secrets = zip(assignments, values).filter { $0.0.reference != nil }.map(\.1)
        // A shell's codes for a command that is not there (127) or cannot be run (126).
        let path = Spawn.search(command[0], environment: environment)
        guard FileSystem.exists(path) else {
            context.note("\(command[0].prefix(200)): command not found")
            throw ChildExit(status: 127)
        }
        guard FileSystem.isExecutable(path) else {
            context.note("\(command[0].prefix(200)): permission denied")
            throw ChildExit(status: 126)
        }
        var child = ForwardingRun(command: command, environment: environment, masker: mask ? OutputMasker(secrets: secrets) : nil)
        throw ChildExit(status: try child.run())
    }

    /// One `NAME=value` to set: a `coffer://` reference, or a literal passed on as it is.
    struct Assignment {
        let name: String
        let reference: SecretReference?
        let literal: String

        init(parsing text: String, origin: String) throws {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw CLIError("\(origin): '\(text.prefix(60))' is not NAME=VALUE", code: .usage)
            }
            name = String(text[..<equals])
            guard name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7a) }),
                  !(name.first?.isNumber ?? true)
            else { throw CLIError("\(origin): '\(name.prefix(60))' is not a variable name", code: .usage) }
            literal = String(text[text.index(after: equals)...])
            reference = literal.hasPrefix(SecretReference.scheme) ? try SecretReference(literal) : nil
        }

        /// `NAME=REF` lines of an env file; `export ` prefixes and quotes around a value are
        /// accepted as dotenv files write them.
        static func read(_ path: String) throws -> [Assignment] {
            let bytes: [UInt8]
            do { bytes = try FileSystem.standard.readUserFile(path, limit: 1 << 20) } catch {
                throw CLIError("cannot read \(path): \(error)", code: .noInput)
            }
            var assignments: [Assignment] = []
            for (number, rawLine) in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                var line = rawLine.trimmingSpaces()
                if line.hasSuffix("\r") { line.removeLast() }
                if line.isEmpty || line.hasPrefix("#") { continue }
                if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingSpaces() }
                if let equals = line.firstIndex(of: "=") {
                    let value = line[line.index(after: equals)...]
                    if value.count >= 2, let quote = value.first, quote == "\"" || quote == "'", value.last == quote {
                        line = String(line[...equals]) + value.dropFirst().dropLast()
                    }
                }
                assignments.append(try Assignment(parsing: line, origin: "\(path):\(number + 1)"))
            }
            return assignments
        }
    }
}
