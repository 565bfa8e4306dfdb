import Coffer
import CofferTerminalKit

/// `coffer agent`: the fill agent (SPEC.md §8.5), which `coffer unlock` starts in the background
/// so that fills while unlocked are answered by a warm process. It keeps no key of its own and
/// ends soon after the last session it serves does.
struct AgentCommand: Command {
    static let name = "agent"
    static let summary = "answer fills from a warm process while the vault is unlocked"
    static let usage = "agent [--socket PATH] [--daemon] [--check-every SECONDS]"
    static let discussion = """
        'coffer unlock' starts it in the background (unless --no-agent or COFFER_AGENT=off);
        'coffer fill' then asks it first, and does the work itself when it is not running or
        declines. It listens on $XDG_RUNTIME_DIR/coffer/agent.sock (a 0600 socket in a 0700
        directory; every client's uid is checked), holds no key between requests — each fill
        unlocks from the 'coffer unlock' session as the command would, so 'coffer lock' locks it
        at once — and answers only what a silent fill hands out. It ends when no session it
        serves is live (checked every --check-every seconds, default 30, and at 'coffer lock').
        In the foreground it says on stderr what it answered and declined (never a name or a
        secret).
        """
    static let examples = ["coffer agent", "COFFER_AGENT=off coffer fill github.com"]
    static let options: [OptionSpec] = [
        .value("socket", "listen here instead of $XDG_RUNTIME_DIR/coffer/agent.sock"),
        .flag("daemon", "run in the background (what 'coffer unlock' does)"),
        .value("check-every", "seconds between looks at whether any session is still live (default 30)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let environment = context.io.environment
        let inherited = UnixListener.inherited(environment: environment)
        let path = try inherited == nil ? BackgroundAgent.socketPath(context, name: FillAgentClient.socketName) : ""
        guard let interval = Int32(context.arguments.value("check-every") ?? "30"), interval > 0 else {
            throw CLIError("--check-every takes a whole number of seconds", code: .usage)
        }
        if context.arguments.has("daemon") {
            try startInBackground(context, socket: path)
            return .success
        }
        let listener = try BackgroundAgent.listener(inherited, path: path)
        let agent = FillAgent(log: { context.note($0) })
        if !context.vaultLocationArguments.isEmpty || environment["COFFER_CONTAINER"] != nil {
            let vault = try context.openVault()
            agent.watch(vault, owner: context.hostSession(of: vault, interaction: nil).unlockPolicy.openTeamOwner(of: vault))
        }
        CurrentProcess.changeDirectory(to: "/")  // a daemon keeps no directory busy (an unmount of where 'unlock' ran)
        context.note("fill agent listening on \(listener.path ?? "the socket systemd passed")")
        let socketFile = listener.path.flatMap(FileIdentity.init(path:))
        // It ends once it could only decline (no session it serves is live), or when its socket
        // was removed or replaced (nobody can reach it any more).
        let server = FramedSocketServer(listener: listener, maximumLength: FillAgentRequest.maximumLength,
                                        refusal: FillAgentReply.declined(reason: "request too long").encoded, log: { context.note($0) })
        try server.serve(checkEvery: interval, stillNeeded: {
            agent.isStillNeeded && (listener.path == nil || FileIdentity(path: listener.path!) == socketFile)
        }, respond: agent.respond(to:))
        context.note(agent.isOutdated ? "a client of another version asked; this fill agent ends" : "no unlock session left to serve; the fill agent ends")
        return .success
    }

    /// Starts the agent in the background for this run's vault unless one answers on `socket`
    /// (that one takes this vault on with its first fill).
    /// - Throws: `CLIError` when it could not start.
    static func startInBackground(_ context: CommandContext, socket: String) throws {
        if UnixListener.isListening(at: socket) { return }
        var arguments = ["agent", "--socket", socket]
        if let interval = context.arguments.value("check-every") { arguments += ["--check-every", interval] }
        if let container = try? context.container() { arguments += ["--container", container.absolutePath] }
        do {
            _ = try BackgroundAgent.start(arguments, socket: socket, environment: context.io.environment)
        } catch .ended(let status) {
            throw CLIError("the fill agent ended before it listened on \(socket) (exit \(status))",
                           hint: "run 'coffer agent' in the foreground to see why", code: .unavailable)
        } catch {
            throw CLIError("the fill agent did not start listening on \(socket)", code: .osError)
        }
    }
}
