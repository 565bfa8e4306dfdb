import CLinux
import Glibc

/// Process-wide protections for a process that may hold keys (secrets handled as secrets, SPEC.md §9).
public enum ProcessHardening {
    /// Disables core dumps (`RLIMIT_CORE` 0 and `PR_SET_DUMPABLE` 0, which also stops other
    /// processes of the same user from attaching with ptrace or reading /proc/PID/mem) and sets
    /// umask 077 so every file the process creates is private. Call it before unlocking.
    public static func apply() {
        disableCoreDumps()
        umask(0o077)
    }

    /// Only the core-dump part of `apply()`, without touching the umask: what `Vault` does on
    /// every unlock, so an embedding app never dumps a key.
    public static func disableCoreDumps() {
        _ = coffer_set_dumpable(0)
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
    }

    /// Whether the process may currently dump core (for tests and `coffer status`).
    public static var isDumpable: Bool { coffer_get_dumpable() != 0 }
}
