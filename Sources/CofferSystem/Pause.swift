import Glibc

/// Waiting on the calling thread, for the few loops that poll with a back-off (a lock another
/// process holds, a remote that moved on): `nanosleep`, resumed after a signal for the time left.
public enum Pause {
    public static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }

    /// A random wait of `0..<microseconds`: a jitter, so that processes racing for one thing stop
    /// colliding.
    public static func sleep(randomlyBelow microseconds: Int, atLeast minimum: Int = 0) {
        sleep(for: .microseconds(Int.random(in: minimum..<max(minimum + 1, microseconds))))
    }
}
