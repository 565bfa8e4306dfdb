import Coffer
import CofferDBus
import CofferTerminalKit

/// The `coffer` command line as a library: parse, dispatch, report, return an exit code.
/// `main.swift` only calls `CommandLineTool.main`.
public enum CommandLineTool {
    /// Every command, in the order `coffer help` lists them.
    static let commands: [Command.Type] = [
        InitCommand.self, AddCommand.self, ListCommand.self, SearchCommand.self, FillCommand.self, ShowCommand.self,
        EditCommand.self, OTPCommand.self, RemoveCommand.self, PickCommand.self, MenuCommand.self, AuditCommand.self, GenerateCommand.self, UnlockCommand.self, LockCommand.self, QuickUnlockCommand.self, StatusCommand.self, AttachCommand.self, AttachmentCommand.self,
        ProviderCommand.self, PasswdCommand.self, BackupCommand.self, VerifyCommand.self, RestoreCommand.self,
        ImportCommand.self, ExportCommand.self, RunCommand.self, InjectCommand.self, AgentCommand.self, SSHAgentCommand.self, SSHKeyCommand.self, SecretServiceCommand.self,
        SyncCommand.self, CloneCommand.self, TeamCommand.self, WhoamiCommand.self, MoveCommand.self, BrowserCommand.self, CompletionCommand.self,
        HelpCommand.self,
    ]

    static func command(named name: String) -> Command.Type? {
        commands.first { $0.name == name || $0.aliases.contains(name) }
    }

    /// Runs one command line (without the program name) and returns its exit code.
    public static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration = .standard) -> Int32 {
        let arguments = movingLeadingGlobalOptions(arguments)
        guard let first = arguments.first else {
            io.standardError(HelpText.overview())
            return ExitCode.usage.rawValue
        }
        if first == "--version" || first == "version" {
            io.standardOutput("coffer \(cofferVersion)\n")
            return 0
        }
        if first == CompletionCandidates.name {
            return CompletionCandidates.run(Array(arguments.dropFirst()), io: io, configuration: configuration)
        }
        if first == "--help" || first == "-h" { return run(["help"] + arguments.dropFirst(), io: io, configuration: configuration) }
        guard let command = command(named: first) else {
            let names = commands.flatMap { [$0.name] + $0.aliases }
            let hint = Suggestion.closest(to: first, among: names).map { "did you mean '\($0)'?" }
            report(CLIError("unknown command '\(first)'", hint: hint ?? "'coffer help' lists the commands", code: .usage), io: io)
            return ExitCode.usage.rawValue
        }
        do {
            let parsed = try ParsedArguments.parse(Array(arguments.dropFirst()), specs: command.options + GlobalOptions.all)
            if parsed.has("help") {
                io.standardOutput(HelpText.help(for: command))
                return 0
            }
            let context = CommandContext(arguments: parsed, io: io, configuration: configuration)
            let code = try command.run(context)
            if code == .success, command.changesVault(parsed) { AutoSync.afterChange(context) }
            return code.rawValue
        } catch let exit as ChildExit {
            return exit.status
        } catch let error as UsageError {
            io.standardError("coffer: error: \(DisplayText.escaped(error.message))\nUsage: coffer \(command.usage)\nSee 'coffer \(command.name) --help'.\n")
            return ExitCode.usage.rawValue
        } catch {
            let failure = CLIError.from(error)
            report(failure, io: io)
            return failure.code.rawValue
        }
    }

    /// The real process: arguments from argv, the standard streams, `/dev/tty`.
    public static func main(_ arguments: [String]) -> Int32 {
        ProcessHardening.apply()
        var configuration = CLIConfiguration.standard
        configuration.systemAuthenticator = { PolkitAuthority() }
        return run(Array(arguments.dropFirst()), io: .process(), configuration: configuration)
    }

    /// `coffer --container D add …` means `coffer add … --container D`: global options may
    /// stand before the command name.
    static func movingLeadingGlobalOptions(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("--"), arguments[index] != "--help", arguments[index] != "--version" {
            let name = String(arguments[index].dropFirst(2).prefix { $0 != "=" })
            guard let spec = GlobalOptions.all.first(where: { $0.name == name }) else { break }
            leading.append(arguments[index])
            index += 1
            if spec.kind == .value, !arguments[index - 1].contains("="), index < arguments.count {
                leading.append(arguments[index])
                index += 1
            }
        }
        guard index < arguments.count else { return arguments }
        return [arguments[index]] + Array(arguments[(index + 1)...]) + leading
    }

    static func report(_ error: CLIError, io: IO) {
        // Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
        let colour = io.standardErrorIsTerminal && (io.environment["NO_COLOR"] ?? "").isEmpty
        // The message may quote a name or a label: its control characters are escaped, the
        // colour (ours) is added after.
        var text = "coffer: \(colour ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:") \(DisplayText.escaped(error.message, keepingLineBreaks: true))\n"
        if let hint = error.hint { text += "coffer: hint: \(DisplayText.escaped(hint, keepingLineBreaks: true))\n" }
        io.standardError(text)
    }
}
