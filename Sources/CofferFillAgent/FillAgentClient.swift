import CofferProvider
import CofferHostKit

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
        let fd: Int32
        switch UnixSocket.connect(to: socketPath, timeoutMilliseconds: Self.timeoutMilliseconds) {
        case .connected(let connected): fd = connected
        case .absent: return .absent
        case .unusable: return .unusable
        }
        defer { Descriptor.close(fd) }
        var framed = request.encoded
        defer { framed.withUnsafeMutableBytes { Sodium.wipe($0) } }
        // Sent at once after the connect: the agent, woken by the connection, finds it waiting.
        guard Descriptor.writeAll(fd, framed, noSignal: true) == nil, let header = Descriptor.readExactly(fd, count: 4, before: deadline) else {
            return .unusable
        }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= FillAgentReply.maximumLength, var body = Descriptor.readExactly(fd, count: length, before: deadline) else {
            return .unusable
        }
        defer { body.withUnsafeMutableBytes { Sodium.wipe($0) } }
        guard let reply = try? FillAgentReply(body) else { return .unusable }
        return .reply(reply)
    }
}
