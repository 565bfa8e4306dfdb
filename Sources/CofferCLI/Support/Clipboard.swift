import Coffer
import CofferTerminalKit
import FoundationEssentials

/// Copies a secret to the desktop clipboard with `wl-copy` (Wayland) or `xclip` (X11), as pass
/// does, and schedules putting back what was there before. The secret goes through a pipe, never
/// argv. Marking the copy as a password for clipboard managers (`x-kde-passwordManagerHint`)
/// needs a second target on the selection: `wl-copy --sensitive` (wl-clipboard 2.2) offers it and
/// is used when present; xclip and older wl-copy serve one target only, so there it is not set.
enum Clipboard {
    /// Seconds before the clipboard is cleared (`HostSession.clipboardClearDelay`).
    static func clearDelay(_ environment: Environment) -> Int { HostSession.clipboardClearDelay(environment) }

    /// The commands for this session's clipboard, or `nil` without a usable one.
    struct Tool {
        let copy: [String]
        /// Shell words that print the clipboard, when the session has a way.
        let paste: String?
        /// Shell words that empty it.
        let clear: String
    }

    /// The executable `name` on `$PATH`.
    static func find(_ name: String, _ environment: Environment) -> String? {
        environment.programPath(name)
    }

    static func tool(_ environment: Environment) -> Tool? {
        func find(_ name: String) -> String? { Self.find(name, environment) }
        if environment["WAYLAND_DISPLAY"] != nil, let wlCopy = find("wl-copy") {
            return Tool(copy: [wlCopy], paste: find("wl-paste").map { "'\($0)' --no-newline" }, clear: "'\(wlCopy)' --clear")
        }
        if environment["DISPLAY"] != nil, let xclip = find("xclip") {
            return Tool(copy: [xclip, "-selection", "clipboard"], paste: "'\(xclip)' -selection clipboard -o",
                        clear: "printf '' | '\(xclip)' -selection clipboard")
        }
        return nil
    }

    /// Why there is no clipboard: a tool without a display says so (an ssh session, a
    /// console), and no tool says which to install.
    static func missing(_ environment: Environment) -> CLIError {
        if let tool = ["wl-copy", "xclip"].first(where: { find($0, environment) != nil }) {
            let variable = tool == "wl-copy" ? "WAYLAND_DISPLAY" : "DISPLAY"
            return CLIError("\(tool) is installed but there is no display ($\(variable) is not set)",
                            hint: "run it in your desktop session, or drop --clip", code: .unavailable)
        }
        return CLIError("no clipboard: neither wl-copy (Wayland) nor xclip (X11) is usable here",
                        hint: "install wl-clipboard or xclip, or drop --clip", code: .unavailable)
    }

    /// Copies `secret` and starts a detached `sh` that, after the delay, puts back what the
    /// clipboard held before (or clears it) — unless it no longer holds the secret: something the
    /// user copied meanwhile is left alone (pass does the same). The shell gets the secret and the
    /// previous text on its stdin, never argv or the environment; a secret with a line break or
    /// NUL, which `read` cannot carry, or a session without a paste command is cleared
    /// unconditionally.
    static func copy(_ secret: String, io: IO) throws -> Int {
        guard let tool = tool(io.environment) else { throw missing(io.environment) }
        let delay = clearDelay(io.environment)
        let previous = tool.paste.flatMap { capture($0, environment: io.environment) }
        let status = try spawn(tool.copy + sensitiveFlag(tool, io.environment), environment: io.environment, input: Array(secret.utf8))
        guard status == 0 else { throw CLIError("\(tool.copy[0]) failed (exit status \(status))", code: .osError) }
        let script: String
        let input: [UInt8]
        if let paste = tool.paste, !secret.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) {
            let copyBack = tool.copy.map { "'\($0)'" }.joined(separator: " ")
            script = "IFS= read -r secret; previous=$(cat); sleep \(delay); [ \"$(\(paste) 2>/dev/null)\" = \"$secret\" ] || exit 0; "
                + "if [ -n \"$previous\" ]; then printf '%s' \"$previous\" | \(copyBack); else \(tool.clear); fi"
            input = Array((secret + "\n").utf8) + (previous ?? [])
        } else {
            script = "sleep \(delay); \(tool.clear)"
            input = []
        }
        // setsid -f returns at once; its detached child sleeps, then clears.
        _ = try spawn(["/usr/bin/setsid", "-f", "/bin/sh", "-c", script], environment: io.environment, input: input)
        return delay
    }

    /// `--sensitive` when this wl-copy has it (it then offers `x-kde-passwordManagerHint`).
    private static func sensitiveFlag(_ tool: Tool, _ environment: Environment) -> [String] {
        guard tool.copy[0].hasSuffix("wl-copy"), let help = capture("'\(tool.copy[0])' --help", environment: environment),
              String(decoding: help, as: UTF8.self).contains("--sensitive")
        else { return [] }
        return ["--sensitive"]
    }

    /// The output of a short shell command (the current clipboard), at most 1 MiB; `nil` on
    /// failure or when it holds a NUL (not text: not something to put back).
    private static func capture(_ command: String, environment: Environment) -> [UInt8]? {
        guard let child = try? ChildProcess(["/bin/sh", "-c", command], environment: environment) else { return nil }
        child.closeInput()
        let output = try? child.readToEnd(limit: 1 << 20)
        guard child.wait() == 0, let output, !output.contains(0) else { return nil }
        return output
    }

    /// Runs a program with `input` on its stdin and /dev/null for output, and waits for it alone
    /// (`Spawn.run(_:environment:feeding:)`).
    static func spawn(_ arguments: [String], environment: Environment, input: [UInt8]) throws -> Int32 {
        do { return try Spawn.run(arguments, environment: environment, feeding: input) } catch {
            throw CLIError("could not start \(arguments[0])", code: .osError)
        }
    }
}
