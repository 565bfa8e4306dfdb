import CofferTerminalKit
import FoundationEssentials

/// Help texts built from the command types, so `coffer help`, `--help` and the man page share
/// one source.
enum HelpText {
    static func overview() -> String {
        var text = "coffer — an encrypted, file-based credential vault\n\nUsage: coffer <command> [options]\n\nCommands:\n"
        let width = (CommandLineTool.commands.map { $0.name.count }.max() ?? 8) + 2
        for command in CommandLineTool.commands {
            text += "  " + padded(command.name, to: width) + command.summary + "\n"
        }
        text += """

        The vault is found from --container DIR, else --group ID, else $COFFER_CONTAINER, else the
        default group. Passwords are never taken from the command line.

        Global options:

        """
        for option in GlobalOptions.all {
            text += "  " + padded(option.synopsis, to: 24) + option.help + "\n"
        }
        text += """

        See 'coffer help <command>' for one command's options and examples.

        """
        return text
    }

    static func help(for command: Command.Type) -> String {
        var text = "coffer \(command.name) — \(command.summary)\n\nUsage: coffer \(command.usage)\n"
        if !command.discussion.isEmpty { text += "\n" + command.discussion + "\n" }
        if !command.options.isEmpty {
            text += "\nOptions:\n"
            for option in command.options {
                text += "  " + padded(option.synopsis, to: 24) + option.help + "\n"
            }
        }
        text += "\nGlobal options (--container, --group, --password-stdin, --password-file, --no-interaction, --accept-rollback): 'coffer help'.\n"
        if !command.examples.isEmpty {
            text += "\nExamples:\n" + command.examples.map { "  \($0)\n" }.joined()
        }
        return text
    }

    /// `text` padded with spaces to `width` columns; a longer text keeps one space after it.
    static func padded(_ text: String, to width: Int) -> String {
        text.count < width ? text + String(repeating: " ", count: width - text.count) : text + " "
    }
}

import FoundationEssentials
