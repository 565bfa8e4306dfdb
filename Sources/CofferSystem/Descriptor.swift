import Glibc

/// Whole reads and writes on a file descriptor, the one implementation of each: a short read or
/// write is continued, an interrupted one retried (`SystemCall`), and the end of input or a
/// failure is told apart.
public enum Descriptor {
    /// Closes `fd` (never retried: after `EINTR` Linux has already closed it).
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Writes every byte of `bytes`.
    /// - Parameter noSignal: for a socket, `send` with `MSG_NOSIGNAL`: a peer that went away is
    ///   an error (`EPIPE`), not a SIGPIPE that ends the process.
    /// - Returns: the failure that stopped it (a closed pipe, a full disk), if any.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, noSignal: Bool = false) -> Errno? {
        var offset = 0
        while offset < bytes.count {
            let written = SystemCall.retryingInterrupts {
                noSignal
                    ? send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    : write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }
            switch written {
            case .success(0): return Errno(EIO)  // nothing written of a non-empty rest: no progress to wait for
            case .success(let count): offset += count
            case .failure(let error): return error
            }
        }
        return nil
    }

    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], noSignal: Bool = false) -> Errno? {
        bytes.withUnsafeBytes { writeAll(fd, $0, noSignal: noSignal) }
    }

    /// One read of at most `buffer.count` bytes (at `offset` in the file, with `pread`, when
    /// given): the count read, 0 at the end of input.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int? = nil) -> Result<Int, Errno> {
        SystemCall.retryingInterrupts {
            if let offset { pread(fd, buffer.baseAddress!, buffer.count, off_t(offset)) } else { Glibc.read(fd, buffer.baseAddress!, buffer.count) }
        }
    }

    /// Reads until `buffer` is full or the input ends (a file that shrank while it was read):
    /// the count read, or the failure that stopped it.
    public static func readUntilFullOrEnd(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int? = nil) -> Result<Int, Errno> {
        var done = 0
        while done < buffer.count {
            switch read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset.map { $0 + done }) {
            case .success(0): return .success(done)
            case .success(let count): done += count
            case .failure(let error): return .failure(error)
            }
        }
        return .success(done)
    }

    /// What `readExactly` found.
    public enum ReadOutcome: Equatable, Sendable {
        /// Every byte asked for.
        case complete
        /// The end of input before the first byte: a clean end between messages.
        case endOfInput
        /// The end of input after some bytes but before the last: a message cut short.
        case truncated
        /// The deadline passed first.
        case timedOut
        case failed(Errno)
    }

    /// Fills `buffer` from `fd`.
    /// - Parameter deadline: for a socket, each read is allowed only the time left before it
    ///   (`SO_RCVTIMEO` set anew before every read), so a peer that trickles bytes is given up on
    ///   at the deadline, not granted the timeout again for every byte.
    public static func readExactly(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, before deadline: ContinuousClock.Instant? = nil
    ) -> ReadOutcome {
        var offset = 0
        while offset < buffer.count {
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return .timedOut }
                let (seconds, attoseconds) = left.components
                var timeout = timeval(tv_sec: Int(seconds), tv_usec: max(1, Int(attoseconds / 1_000_000_000_000)))
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }
            switch SystemCall.retryingInterrupts({ Glibc.read(fd, buffer.baseAddress! + offset, buffer.count - offset) }) {
            case .success(0): return offset == 0 ? .endOfInput : .truncated
            case .success(let count): offset += count
            case .failure(let error) where deadline != nil && error == .wouldBlock: return .timedOut
            case .failure(let error): return .failed(error)
            }
        }
        return .complete
    }

    /// Whether `fd` has something to read (or its end, or an error) within `milliseconds`.
    public static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        waitReadable([fd], milliseconds: milliseconds)[0]
    }

    /// Which of `fds` have something to read (or their end, or an error), waiting up to
    /// `milliseconds` (-1: until one has) for the first. A failed wait reports every one, so
    /// the caller reads and learns why.
    public static func waitReadable(_ fds: [Int32], milliseconds: Int32 = -1) -> [Bool] {
        var descriptors = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard case .success = SystemCall.retryingInterrupts({ poll(&descriptors, nfds_t(descriptors.count), milliseconds) }) else {
            return fds.map { _ in true }
        }
        return descriptors.map { $0.revents != 0 }
    }

    /// `count` bytes, or nil for anything but a complete read (the partial bytes wiped).
    public static func readExactly(_ fd: Int32, count: Int, before deadline: ContinuousClock.Instant? = nil) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let outcome = bytes.withUnsafeMutableBytes { readExactly(fd, into: $0, before: deadline) }
        guard outcome == .complete else {
            bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
            return nil
        }
        return bytes
    }
}
