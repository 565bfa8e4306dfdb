import CofferSupport
import CProcessShims
import Glibc

/// A listening Unix socket only this user can reach (the SSH agent's): the socket is 0600 in a
/// directory that must be this user's and closed to others (0700, made so when Coffer creates
/// it), and every connection's peer is checked with `SO_PEERCRED` as well — permissions can be
/// loosened after the fact, the kernel's word on who connected cannot.
public final class UnixListener {
    public let descriptor: Int32
    /// The socket's path when Coffer bound it (and removes it at the end); `nil` when systemd
    /// passed it in (socket activation) and owns it.
    public let path: String?

    /// Binds `path`, replacing a stale socket nobody listens on.
    public init(path: String) throws(UnixListenerError) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        try Self.preparePrivateDirectory(directory.isEmpty ? "/" : directory)
        guard var address = UnixSocket.address(path) else { throw .pathTooLong(path) }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
            guard !Self.isListening(at: path) else { throw .inUse(path) }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        let previousMask = umask(0o177)  // the socket is born 0600: no moment when others may connect
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previousMask)
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw .system("bind", code)
        }
        descriptor = fd
        self.path = path
    }

    /// Where Coffer's agent `name` listens by default: `$XDG_RUNTIME_DIR/coffer/NAME`; `nil`
    /// without an absolute runtime directory (there is no private place for a socket then).
    public static func runtimePath(_ name: String, environment: Environment) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return runtime + "/coffer/" + name
    }

    /// A socket systemd passed (`LISTEN_FDS`, descriptor 3), when it is meant for this process.
    public static func inherited(environment: Environment) -> UnixListener? {
        guard environment["LISTEN_PID"] == String(getpid()), let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else {
            return nil
        }
        var info = stat()
        guard fstat(3, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        let flags = fcntl(3, F_GETFL)
        _ = fcntl(3, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        return UnixListener(descriptor: 3)
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        path = nil
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }

    /// The next waiting connection (non-blocking, close-on-exec) and its peer's user id, or
    /// `nil` when none is waiting.
    public func accept() -> (descriptor: Int32, uid: uid_t?)? {
        let fd = coffer_accept(descriptor)
        guard fd >= 0 else { return nil }
        return (fd, UnixSocket.peerUID(fd))
    }

    /// Makes `directory` (0700) if missing; refuses one that is not this user's or that others
    /// may enter, as the container's own check does (SPEC.md §3.5).
    static func preparePrivateDirectory(_ directory: String) throws(UnixListenerError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .system("mkdir \(directory)", errno) }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw .system("stat \(directory)", errno) }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw .unsafeDirectory(directory)
        }
    }

    /// Whether something listens on `path` (a live agent, not a stale socket file). The probe
    /// does not wait: a listener whose backlog is full (a wedged agent) is one at once, where a
    /// blocking `connect` would wait for it for ever.
    public static func isListening(at path: String) -> Bool {
        guard var address = UnixSocket.address(path) else { return false }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        return connected || errno == EAGAIN
    }
}

public enum UnixListenerError: Error, Equatable, Sendable, CustomStringConvertible {
    case pathTooLong(String)
    case notASocket(String)
    case inUse(String)
    case unsafeDirectory(String)
    case system(String, Int32)

    public var description: String {
        switch self {
        case .pathTooLong(let path): "\(path) is too long for a Unix socket (108 bytes at most)"
        case .notASocket(let path): "\(path) exists and is not a socket; nothing was replaced"
        case .inUse(let path): "an agent already listens on \(path)"
        case .unsafeDirectory(let path): "\(path) must be a directory of yours that others cannot enter (chmod 700)"
        case .system(let operation, let code): "\(operation) failed: \(String(cString: strerror(code)))"
        }
    }
}
