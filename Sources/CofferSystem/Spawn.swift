import CofferSupport
import CProcessShims
import Glibc

/// The one way Coffer starts a program (`posix_spawn`): every child — pinentry, git, a
/// `coffer run` command, the editor, a clipboard tool — starts with no signal blocked and every
/// disposition at its default (`SpawnAttributes`), gets exactly the descriptors named here, and
/// has its arguments and environment built the same way. `ChildProcess`, `CommandChild`, the
/// editor and the clipboard are uses of it; none calls `posix_spawn` itself.
public struct Spawn {
    /// What a descriptor of the child is, set up in order before the program runs.
    public enum FileAction: Sendable {
        case duplicate(Int32, to: Int32)
        case open(String, as: Int32, flags: Int32)
        case close(Int32)
        /// Closes every descriptor from this one up (nothing of ours leaks into a daemon).
        case closeFrom(Int32)
    }

    public var arguments: [String]
    /// `NAME=value` entries.
    public var environment: [String]
    /// The file run; `nil` searches the child's `PATH` (`environment`'s, as a shell would run
    /// it) for `arguments[0]` when it has no slash.
    public var executable: String?
    public var fileActions: [FileAction] = []
    /// Starts the child in a new session with no controlling terminal.
    public var newSession = false
    /// Wipes the C copies of the environment after the spawn (it carries secrets for `run`).
    public var wipeEnvironment = false

    public init(_ arguments: [String], environment: [String], executable: String? = nil) {
        self.arguments = arguments
        self.environment = environment
        self.executable = executable
    }

    public init(_ arguments: [String], environment: Environment, executable: String? = nil) {
        self.init(arguments, environment: environment.variables.map { "\($0.name)=\($0.value)" }, executable: executable)
    }

    /// `program` itself when it has a slash, else the first executable in the child's `PATH`
    /// (posix_spawnp would search the parent's); without a `PATH`, `/usr/local/bin:/usr/bin:/bin`.
    public static func search(_ program: String, environment: [String]) -> String {
        guard !program.contains("/") else { return program }
        let path = environment.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return program
    }

    /// Starts the program.
    /// - Returns: its process id.
    /// - Throws: `ChildProcessError.launch` with the `posix_spawn` error.
    public func start() throws(ChildProcessError) -> pid_t {
        guard let program = arguments.first else { throw .launch("", EINVAL) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in fileActions {
            switch action {
            case .duplicate(let from, let to): posix_spawn_file_actions_adddup2(&actions, from, to)
            case .open(let path, let descriptor, let flags): posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0)
            case .close(let descriptor): posix_spawn_file_actions_addclose(&actions, descriptor)
            case .closeFrom(let lowest): coffer_spawn_close_from(&actions, lowest)
            }
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            for entry in envp {
                if wipeEnvironment, let entry { explicit_bzero(entry, strlen(entry)) }
                free(entry)
            }
        }
        var child: pid_t = 0
        let spawned = SpawnAttributes.with(newSession: newSession) { attributes in
            posix_spawn(&child, executable ?? Self.search(program, environment: environment), &actions, &attributes, argv, envp)
        }
        guard spawned == 0 else { throw .launch(program, spawned) }
        return child
    }

    /// Waits for `pid` (through `EINTR`) and returns its exit status, 128 + signal when killed
    /// (as shells report it); `nil` with `blocking: false` while it still runs.
    public static func exitStatus(of pid: pid_t, blocking: Bool = true) -> Int32? {
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &raw, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
        guard result == pid else { return blocking ? -1 : nil }
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }
}
