import CProcessShims
import Glibc

/// The `posix_spawnattr_t` every child of Coffer starts with: no signal blocked and every
/// disposition at its default. A Swift process ignores SIGPIPE (and Coffer blocks the signals it
/// forwards), and a child would inherit both: `yes | head` in a child would then print "Broken
/// pipe" instead of ending quietly, and a child could not be interrupted.
enum SpawnAttributes {
    /// Runs `body` with the attributes; `newSession` adds `setsid` (no controlling terminal).
    static func with<Result>(newSession: Bool = false, _ body: (inout posix_spawnattr_t) -> Result) -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigfillset(&defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newSession { flags |= coffer_spawn_setsid_flag() }
        posix_spawnattr_setflags(&attributes, flags)
        return body(&attributes)
    }
}
