import Coffer
import CofferTerminalKit

/// Starts this program again as a background agent (the SSH agent, the fill agent): in a new
/// session with no terminal, its stderr to /dev/null, and waits until its socket answers, so
/// the PID returned is always that of the agent answering there.
enum BackgroundAgent {
    enum Failure: Error {
        case launch(String)
        /// The child ended before it listened, with this exit status.
        case ended(Int32)
        case neverListened
    }

    /// Starts `coffer ARGUMENTS` (arguments without the program name) and waits up to five
    /// seconds for `socket` to answer.
    static func start(_ arguments: [String], socket: String, environment: Environment) throws(Failure) -> Int32 {
        let child: ChildProcess
        do { child = try spawn(arguments, environment: environment) } catch { throw .launch("\(error)") }
        child.closeInput()
        for _ in 0..<200 {
            if child.hasExited() { throw .ended(child.wait()) }
            if UnixListener.isListening(at: socket) {
                child.detach()
                return child.pid
            }
            Pause.sleep(for: .milliseconds(25))
        }
        throw .neverListened
    }

    /// `coffer ARGUMENTS` in a new session with no terminal, run from this program's own file
    /// (so it shows as `coffer` in `ps`), its stderr to /dev/null.
    static func spawn(_ arguments: [String], environment: Environment) throws(ChildProcessError) -> ChildProcess {
        try ChildProcess(["coffer"] + arguments, environment: environment, newSession: true, executable: OwnExecutable.path ?? "/proc/self/exe")
    }

    /// Where an agent command listens: `--socket PATH`, else `$XDG_RUNTIME_DIR/coffer/NAME`.
    static func socketPath(_ context: CommandContext, name: String) throws -> String {
        if let path = context.arguments.value("socket") { return path }
        guard let path = UnixListener.runtimePath(name, environment: context.io.environment) else {
            throw CLIError("$XDG_RUNTIME_DIR is not set", hint: "give --socket PATH in a directory only you can enter", code: .usage)
        }
        return path
    }

    /// The socket an agent command serves: the one systemd passed, else `path` bound now.
    static func listener(_ inherited: UnixListener?, path: String) throws -> UnixListener {
        if let inherited { return inherited }
        do { return try UnixListener(path: path) } catch { throw CLIError("\(error)", code: .unavailable) }
    }
}
