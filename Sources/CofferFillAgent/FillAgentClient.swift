import CofferCore
import CofferHostKit
import CProcessShims
import Glibc

/// How `coffer fill` asks the fill agent (SPEC.md §8.5): connect to the socket, make sure the
/// kernel says the other end is this user, send one request, read one answer — all bounded by a
/// timeout, and every failure is "no agent": the client then fills by itself. The agent is an
/// optimisation; no answer of it is ever needed.
public struct FillAgentClient: Sendable {
    public let socketPath: String
    /// How long a connection may take to answer before the client gives up on it.
    static let timeoutMilliseconds = 2000

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// `$XDG_RUNTIME_DIR/coffer/agent.sock`; `nil` where the agent is off (`COFFER_AGENT=off`)
    /// or there is no runtime directory to put it in.
    public init?(environment: Environment) {
        guard environment["COFFER_AGENT"] != "off", let path = UnixListener.runtimePath(Self.socketName, environment: environment) else {
            return nil
        }
        self.init(socketPath: path)
    }

    /// The socket's name in `$XDG_RUNTIME_DIR/coffer/`.
    public static let socketName = "agent.sock"

    public enum Answer: Sendable {
        case reply(FillAgentReply)
        /// Nobody listens on the socket: an agent may be started there.
        case absent
        /// Something listens but is no use: another user's socket, no answer in time, or one
        /// that is not an answer. It is passed by, not replaced.
        case unusable
    }

    /// Sends `request` and waits for the answer: the whole exchange, connect included, within
    /// `timeoutMilliseconds` (SPEC.md §8.5) — an agent that trickles its answer a byte at a time
    /// is given up on at the deadline, not granted the timeout again for every byte.
    public func send(_ request: FillAgentRequest) -> Answer {
        let deadline = ContinuousClock.now + .milliseconds(Self.timeoutMilliseconds)
        guard let fd = connect() else { return .absent }
        guard fd >= 0 else { return .unusable }
        defer { close(fd) }
        var framed = request.encoded
        defer { framed.withUnsafeMutableBytes { Sodium.wipe($0) } }
        guard writeAll(fd, framed), let header = readExactly(fd, 4, before: deadline) else { return .unusable }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= FillAgentReply.maximumLength, var body = readExactly(fd, length, before: deadline) else { return .unusable }
        defer { body.withUnsafeMutableBytes { Sodium.wipe($0) } }
        guard let reply = try? FillAgentReply(body) else { return .unusable }
        return .reply(reply)
    }

    /// A connected socket whose peer is this user; -1 when the listener is another user's or
    /// does not take the connection in time (a full backlog); `nil` when nobody listens.
    private func connect() -> Int32? {
        guard var address = UnixListener.address(socketPath) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        // Before connecting: an agent with a full backlog bounds the connect too, and once
        // connected the request goes out at once — the agent, woken by the connection, finds it
        // waiting instead of sleeping again until it comes.
        var timeout = timeval(tv_sec: Self.timeoutMilliseconds / 1000, tv_usec: (Self.timeoutMilliseconds % 1000) * 1000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard connected else {
            let busy = errno == EAGAIN || errno == EINTR
            close(fd)
            return busy ? -1 : nil
        }
        // The kernel's word on who listens: a socket someone else put there gets nothing asked.
        guard coffer_peer_uid(fd) == Int64(geteuid()) else {
            close(fd)
            return -1
        }
        return fd
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// `count` bytes, each read allowed only the time left before `deadline` (the receive
    /// timeout set anew before every read).
    private func readExactly(_ fd: Int32, _ count: Int, before deadline: ContinuousClock.Instant) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count), offset = 0
        while offset < count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                bytes.withUnsafeMutableBytes { Sodium.wipe($0) }
                return nil
            }
            let (seconds, attoseconds) = left.components
            var timeout = timeval(tv_sec: Int(seconds), tv_usec: max(1, Int(attoseconds / 1_000_000_000_000)))
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, count - offset) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                bytes.withUnsafeMutableBytes { Sodium.wipe($0) }
                return nil
            }
            offset += got
        }
        return bytes
    }
}
