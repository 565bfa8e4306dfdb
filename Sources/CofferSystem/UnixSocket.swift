import CProcessShims
import Glibc

/// The client side of a Unix socket of this user's (the fill agent's, the SSH agent's): one
/// connect, bounded in time, and the kernel's word on who listens.
public enum UnixSocket {
    public enum Connection: Equatable, Sendable {
        case connected(Int32)
        /// Nobody listens there (no socket, or a stale one).
        case absent
        /// A listener that does not take the connection in time (a full backlog), or another
        /// user's socket: either way nothing is asked of it.
        case unusable
    }

    /// Connects to `path`, with `timeoutMilliseconds` as the send and receive timeout — set
    /// before connecting, so a listener with a full backlog bounds the connect too.
    public static func connect(to path: String, timeoutMilliseconds: Int) -> Connection {
        guard var address = address(path) else { return .absent }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .absent }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Not retried on EINTR: an interrupted connect goes on in the background, and a second
        // connect would fail with EALREADY; the caller's one attempt is what the deadline allows.
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard connected else {
            let busy = errno == EAGAIN || errno == EINTR
            close(fd)
            return busy ? .unusable : .absent
        }
        guard peerUID(fd) == geteuid() else {
            close(fd)
            return .unusable
        }
        return .connected(fd)
    }

    /// The user on the other end of a connected socket (`SO_PEERCRED`), as the kernel tells it.
    public static func peerUID(_ fd: Int32) -> uid_t? {
        let uid = coffer_peer_uid(fd)
        return uid < 0 ? nil : uid_t(uid)
    }

    /// The socket address of `path`; `nil` when it is too long for one (108 bytes).
    public static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        return address
    }
}
