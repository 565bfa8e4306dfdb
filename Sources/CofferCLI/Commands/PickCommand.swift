import Coffer
import CofferTerminalKit

struct PickCommand: Command {
    static let name = "pick"
    static let summary = "choose a login with fuzzy search, then print, copy or type its password"
    static let usage = "pick [QUERY] [--print | --clip | --type] [--otp]"
    static let discussion = """
        Fuzzy search over every login with fzf when it is installed (Debian's fzf; $FZF_DEFAULT_OPTS
        applies), else a numbered menu on the terminal. QUERY starts the search; a single match is
        taken at once. The password (or with --otp the one-time code) is printed (the default),
        copied (--clip) or typed into the focused window (--type, with wtype or xdotool). A locked
        vault asks for the master password with pinentry ($COFFER_PINENTRY overrides the program);
        a 'coffer unlock' session counts.
        """
    static let examples = ["coffer pick", "coffer pick github --clip", "coffer pick --otp bank"]
    static let options: [OptionSpec] = [
        .flag("print", "print the password (the default)"),
        .flag("clip", "copy it to the clipboard instead"),
        .flag("type", "type it into the focused window (wtype, xdotool)"),
        .flag("otp", "the one-time code instead of the password"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let query = try context.positionals(0...1, names: "QUERY").first ?? ""
        let action = try PickerSession.action(context.arguments, default: .print)
        let session = PickerSession(context: context, vault: try context.sessionVault(requireUnlocked: false), oneTimeCode: context.arguments.has("otp"))
        let entries = try session.entries()
        guard !entries.isEmpty else { throw CLIError("nothing to pick from", hint: "'coffer add' or 'coffer import' first", code: .noInput) }
        let chosen: PickerSession.Entry?
        // fzf draws on the terminal: without one it only fails ("Failed to read /dev/tty").
        if context.terminal != nil, let fzf = Clipboard.find("fzf", context.io.environment) {
            chosen = try pickWithFzf(fzf, entries, query: query, context: context)
        } else {
            chosen = try pickOnTerminal(entries, query: query, context: context)
        }
        guard let chosen else { throw CLIError("nothing chosen", code: .failure) }
        try session.deliver(chosen, action: action)
        return .success
    }

    private static func pickWithFzf(_ fzf: String, _ entries: [PickerSession.Entry], query: String, context: CommandContext) throws -> PickerSession.Entry? {
        let arguments = [fzf, "--query", query, "--select-1", "--exit-0", "--no-multi", "--prompt", "coffer> ", "--height", "40%", "--reverse"]
        let child = try ChildProcess(arguments, environment: context.io.environment, inheritStandardError: true)
        try child.write(Array(entries.map(\.line).joined(separator: "\n").utf8) + [0x0A])
        child.closeInput()
        let output = try child.readToEnd(limit: 1 << 20)
        let status = child.wait()
        guard status == 0 || status == 1 else {
            if status == 130 { return nil }  // Esc or Ctrl-C
            throw CLIError("fzf failed (exit status \(status))", code: .osError)
        }
        let line = String(decoding: output, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return PickerSession.entry(for: line, in: entries)
    }

    private static func pickOnTerminal(_ entries: [PickerSession.Entry], query: String, context: CommandContext) throws -> PickerSession.Entry? {
        let words = query.lowercased().split(separator: " ")
        let matching = entries.filter { entry in words.allSatisfy { entry.line.lowercased().contains($0) } }
        if matching.count == 1 { return matching[0] }
        guard let terminal = context.terminal else {
            throw CLIError("\(matching.count) entries match and there is no terminal to choose on",
                           hint: "give a QUERY that matches one (or run 'coffer menu' on the desktop)", code: .usage)
        }
        guard !matching.isEmpty else { return nil }
        for (number, entry) in matching.prefix(50).enumerated() { terminal.write("  \(number + 1)) \(entry.line)\n") }
        guard let answer = terminal.readLine(prompt: "Choose 1-\(min(matching.count, 50)), or Enter to cancel: "), let number = Int(answer),
              matching.prefix(50).indices.contains(number - 1)
        else { return nil }
        return matching[number - 1]
    }
}
