import Coffer
import CofferTerminalKit

struct MenuCommand: Command {
    static let name = "menu"
    static let summary = "launcher mode for rofi, wofi, fuzzel or dmenu: pick a login, copy or type it"
    static let usage = "menu [--launcher rofi|wofi|fuzzel|dmenu|PATH] [--clip | --type] [--otp]"
    static let discussion = """
        For a desktop key binding, as passmenu and rofi-rbw: lists every login in the launcher, then
        copies the password of the one chosen (the default) or types it (--type). The launcher is
        detected (fuzzel, wofi or rofi on Wayland; rofi or dmenu on X11) unless --launcher names one;
        a PATH is run as a dmenu-compatible program (lines on stdin, the choice on stdout). A
        locked vault asks with pinentry.
        """
    static let examples = ["coffer menu", "coffer menu --launcher rofi --type", "bindsym $mod+p exec coffer menu"]
    static let options: [OptionSpec] = [
        .value("launcher", "rofi, wofi, fuzzel, dmenu, or a dmenu-compatible program's path"),
        .flag("clip", "copy the password (the default)"),
        .flag("type", "type it into the focused window (wtype, xdotool)"),
        .flag("otp", "the one-time code instead of the password"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let action = try PickerSession.action(context.arguments, default: .clip)
        let launcher = try launcherCommand(context.arguments.value("launcher"), environment: context.io.environment)
        let session = PickerSession(context: context, vault: try context.sessionVault(requireUnlocked: false), oneTimeCode: context.arguments.has("otp"))
        let entries = try session.entries()
        guard !entries.isEmpty else { throw CLIError("nothing to pick from", code: .noInput) }
        let child = try ChildProcess(launcher, environment: context.io.environment, inheritStandardError: true)
        try child.write(Array(entries.map(\.line).joined(separator: "\n").utf8) + [0x0A])
        child.closeInput()
        let output = try child.readToEnd(limit: 1 << 20)
        guard child.wait() == 0, let line = String(decoding: output, as: UTF8.self).split(separator: "\n").first,
              let chosen = PickerSession.entry(for: String(line), in: entries)
        else { return .failure }  // dismissed
        try session.deliver(chosen, action: action)
        return .success
    }

    /// The launcher's command line in dmenu mode.
    static func launcherCommand(_ requested: String?, environment: Environment) throws -> [String] {
        let modes: [String: [String]] = [
            "rofi": ["-dmenu", "-i", "-p", "coffer"], "wofi": ["--dmenu", "--insensitive", "--prompt", "coffer"],
            "fuzzel": ["--dmenu", "--prompt", "coffer> "], "dmenu": ["-i", "-p", "coffer"],
        ]
        if let requested {
            if requested.contains("/") { return [requested] }
            guard let mode = modes[requested] else { throw UsageError("unknown launcher '\(requested.prefix(20))'; use rofi, wofi, fuzzel, dmenu or a path") }
            guard let path = Clipboard.find(requested, environment) else { throw CLIError("\(requested) is not installed", code: .usage) }
            return [path] + mode
        }
        let candidates = environment["WAYLAND_DISPLAY"] != nil ? ["fuzzel", "wofi", "rofi"] : environment["DISPLAY"] != nil ? ["rofi", "dmenu"] : []
        guard let name = candidates.first(where: { Clipboard.find($0, environment) != nil }), let path = Clipboard.find(name, environment) else {
            throw CLIError("no launcher found (rofi, wofi, fuzzel or dmenu, with a display)", hint: "--launcher names one; 'coffer pick' works in a terminal", code: .unavailable)
        }
        return [path] + modes[name]!
    }
}
