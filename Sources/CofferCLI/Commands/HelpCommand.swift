import CofferTerminalKit
import FoundationEssentials

struct HelpCommand: Command {
    static let name = "help"
    static let summary = "show help for coffer or one command"
    static let usage = "help [COMMAND] [--man]"
    static let options: [OptionSpec] = [.flag("man", "print the manual page (roff), as shipped in docs/coffer.1")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        if context.arguments.has("man") {
            context.io.standardOutput(ShellCompletion.manPage())
            return .success
        }
        guard let name = context.arguments.positionals.first else {
            context.io.standardOutput(HelpText.overview())
            return .success
        }
        guard let command = CommandLineTool.command(named: name) else {
            throw UsageError("no such command '\(name)'")
        }
        context.io.standardOutput(HelpText.help(for: command))
        return .success
    }

}
