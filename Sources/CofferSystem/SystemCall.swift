import Glibc

/// The error number a failed system call left, read at once and kept as a value (never the
/// global `errno` read later, after another call changed it).
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's error number now.
    public static var current: Errno { Errno(errno) }

    public static let interrupted = Errno(EINTR)
    public static let notFound = Errno(ENOENT)
    public static let wouldBlock = Errno(EAGAIN)

    public var description: String { String(cString: strerror(rawValue)) }
}

/// How Coffer calls the kernel: each call through here, so that an interrupted call (a signal
/// arrived: `EINTR`) is retried in this one place, and a failure is a value (swift-system's
/// `FileDescriptor`, without the dependency).
public enum SystemCall {
    /// Calls `call` until it returns anything but -1 with `EINTR`.
    /// - Returns: the call's result, or the error number of its failure (a result of -1).
    @inlinable
    public static func retryingInterrupts<Result: FixedWidthInteger & SignedInteger>(_ call: () -> Result) -> Swift.Result<Result, Errno> {
        while true {
            let result = call()
            if result != -1 { return .success(result) }
            let error = Errno.current
            if error != .interrupted { return .failure(error) }
        }
    }
}

extension Result {
    /// Whether a call succeeded, for the calls whose result is only "0 or -1".
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
