import Glibc

/// The controlling terminal (`/dev/tty`) and its echo: the system half of a password prompt.
/// A secret is read from here, never from stdin, so it cannot be mixed up with piped data.
public final class TerminalDevice {
    public let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The controlling terminal, or `nil` when the process has none.
    public static func openControlling() -> TerminalDevice? {
        let fd = SystemCall.retryingInterrupts { open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY) }
        guard case .success(let fd) = fd else { return nil }
        guard isTerminal(fd) else {
            close(fd)
            return nil
        }
        return TerminalDevice(descriptor: fd)
    }

    /// Whether `fd` is a terminal (`isatty`).
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Runs `body` with echo off (the newline still echoed), restoring the terminal's settings
    /// after it, even when it throws.
    public func withEchoOff<Result>(_ body: () throws -> Result) rethrows -> Result {
        var saved = termios()
        let canRestore = tcgetattr(descriptor, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(descriptor, TCSAFLUSH, &silent)
        }
        defer { if canRestore { tcsetattr(descriptor, TCSAFLUSH, &saved) } }
        return try body()
    }
}
