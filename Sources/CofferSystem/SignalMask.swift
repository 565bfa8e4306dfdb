import Glibc

/// Signals held back while something must finish first: a file holding a secret in the clear
/// is removed before Ctrl-C or a hang-up ends the process. Children start with none blocked
/// (`Spawn`'s attributes), so an editor run meanwhile still gets its Ctrl-C.
public enum SignalMask {
    /// What ends a process from a terminal or a service manager.
    public static let endingSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Runs `body` with `signals` blocked; a signal that arrived meanwhile is acted on when they
    /// are unblocked, after `body` and its cleanup.
    public static func holdingBack<Result>(_ signals: [Int32], _ body: () throws -> Result) rethrows -> Result {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        for signal in signals { sigaddset(&blocked, signal) }
        sigprocmask(SIG_BLOCK, &blocked, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
