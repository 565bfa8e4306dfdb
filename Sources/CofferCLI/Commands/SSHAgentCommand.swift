import Coffer
import CofferTerminalKit

/// `coffer ssh-agent`: the vault's SSH keys for ssh, git and everything that speaks the agent
/// protocol, as rbw's and 1Password's agents do (SPEC.md §14).
struct SSHAgentCommand: Command {
    static let name = "ssh-agent"
    static let summary = "serve the vault's SSH keys to ssh (the agent protocol)"
    static let usage = "ssh-agent [--socket PATH] [--daemon | --print-env] [--no-pinentry]"
    static let discussion = """
        Listens on $XDG_RUNTIME_DIR/coffer/ssh-agent.sock (a 0600 socket in a 0700 directory;
        every client's uid is checked too) in the foreground, as systemd and 'ssh-agent -D'
        expect; --daemon starts it in the background and prints the shell lines that point ssh at
        it, --print-env prints them only. Under systemd socket activation it serves the socket
        it is given (contrib/systemd). ssh-key items are listed while the vault is locked (public
        keys only, from the identity store); a signature needs the vault unlocked — by 'coffer
        unlock', else the agent asks through pinentry (COFFER_PINENTRY names the program;
        --no-pinentry refuses instead). An item with the field 'confirm: yes' asks before each
        signature. Ed25519 keys only; see 'coffer ssh-key'.
        """
    static let examples = ["eval \"$(coffer ssh-agent --daemon)\"", "coffer ssh-agent --print-env >> ~/.profile", "systemctl --user enable --now coffer-ssh-agent.socket"]
    static let options: [OptionSpec] = [
        .value("socket", "listen here instead of $XDG_RUNTIME_DIR/coffer/ssh-agent.sock"),
        .flag("daemon", "run in the background and print SSH_AUTH_SOCK for the shell"),
        .flag("print-env", "print SSH_AUTH_SOCK for the shell and exit"),
        .flag("no-pinentry", "never ask; a signature while locked is refused"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let environment = context.io.environment
        let inherited = UnixListener.inherited(environment: environment)
        let path = try inherited == nil ? BackgroundAgent.socketPath(context, name: "ssh-agent.sock") : ""
        if context.arguments.has("print-env") {
            context.print(shellLines(path, environment: environment))
            return .success
        }
        if context.arguments.has("daemon") { return try daemonize(path, context) }
        let listener = try BackgroundAgent.listener(inherited, path: path)
        let keys = SSHAgentKeys(session: try context.hostSession(
            interaction: context.arguments.has("no-pinentry") ? nil : PinentryInteraction(environment: environment)))
        context.note("SSH agent listening on \(listener.path ?? "the socket systemd passed"); SSH_AUTH_SOCK=\(listener.path ?? "…")")
        try SSHAgentServer(listener: listener, keys: keys, log: { context.note($0) }).serve()
        return .success
    }

    /// `SSH_AUTH_SOCK=…; export SSH_AUTH_SOCK;` as ssh-agent prints it, or fish's `set -x`.
    static func shellLines(_ path: String, environment: Environment, pid: Int32? = nil) -> String {
        let quoted = "'" + path.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'"
        if environment["SHELL"]?.hasSuffix("/fish") == true {
            return "set -x SSH_AUTH_SOCK \(quoted);" + (pid.map { " set -x SSH_AGENT_PID \($0);" } ?? "")
        }
        return "SSH_AUTH_SOCK=\(quoted); export SSH_AUTH_SOCK;" + (pid.map { " SSH_AGENT_PID=\($0); export SSH_AGENT_PID;" } ?? "")
    }

    /// Starts this program again without --daemon in a new session with no terminal, waits
    /// until its socket answers, and prints the shell lines. A socket another agent already
    /// serves is refused (69) as the foreground refuses it, and so is a child that ended before
    /// it listened: the printed PID is always that of the agent answering on the socket.
    private static func daemonize(_ path: String, _ context: CommandContext) throws -> ExitCode {
        if UnixListener.isListening(at: path) {
            throw CLIError("another agent is listening on \(path)", hint: "stop it first, or give --socket PATH", code: .unavailable)
        }
        var arguments = ["ssh-agent", "--socket", path]
        if context.arguments.has("no-pinentry") { arguments.append("--no-pinentry") }
        arguments += context.vaultLocationArguments  // the same vault, named absolutely
        do {
            let pid = try BackgroundAgent.start(arguments, socket: path, environment: context.io.environment)
            context.print(shellLines(path, environment: context.io.environment, pid: pid))
            return .success
        } catch .launch(let reason) {
            throw CLIError(reason, code: .osError)
        } catch .ended(let status) {
            throw CLIError("the agent ended before it listened on \(path) (exit \(status))",
                           hint: "run 'coffer ssh-agent' in the foreground to see why", code: .unavailable)
        } catch .neverListened {
            throw CLIError("the agent did not start listening on \(path)", code: .osError)
        }
    }
}
