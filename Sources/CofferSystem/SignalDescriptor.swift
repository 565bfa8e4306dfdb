import CProcessShims
import Glibc

/// Signals read from a descriptor (signalfd) instead of caught by handlers: a loop that polls
/// for a child's output or for clients handles a signal between two reads, and no Swift code
/// ever runs inside a signal handler. The signals are blocked while it lives; the old mask comes
/// back when it goes.
public final class SignalDescriptor {
    public let descriptor: Int32

    /// The signals that end a service (a terminal closed, Ctrl-C, `kill`): it stops cleanly.
    public static let endOfService: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    /// A child process ended (`SIGCHLD`): a loop waiting for it wakes.
    public static let childEnded = SIGCHLD
    private var previousMask = sigset_t()

    public init(_ signals: [Int32]) throws(ChildProcessError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_BLOCK, &mask, &previousMask)
        descriptor = coffer_signalfd(&mask)
        guard descriptor >= 0 else {
            let code = errno
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            throw .io(code)
        }
    }

    deinit {
        // Signals that arrived meanwhile are still pending: take them off before unblocking,
        // so a forwarded SIGINT does not end this process afterwards.
        while next() != nil {}
        close(descriptor)
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }

    /// The next pending signal, and whether a process sent it (`kill`) rather than the kernel
    /// (a terminal's Ctrl-C goes to the whole foreground process group by itself).
    public func next() -> (signal: Int32, sentByProcess: Bool)? {
        var sent: Int32 = 0
        let signal = coffer_signalfd_next(descriptor, &sent)
        return signal < 0 ? nil : (signal, sent != 0)
    }
}
