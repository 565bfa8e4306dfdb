import CofferSupport
import CLinux
import CProcessShims
import Glibc

/// A program started with `posix_spawn`, its standard input and output on pipes: how Coffer runs
/// pinentry (and the tools of other hosts). Arguments never carry a secret; secrets go through
/// the pipes. `posix_spawn` rather than Foundation's `Process`, which the library does not link
/// and which waits for descendants too.
public final class ChildProcess {
    public let pid: pid_t
    /// Write end of the child's stdin; -1 once closed.
    private var input: Int32
    /// Read end of the child's stdout; -1 once closed.
    private var output: Int32
    /// Read end of the child's stderr when it is captured; -1 otherwise.
    private var errors: Int32 = -1
    private var buffered: [UInt8] = []
    private var exitStatus: Int32?

    /// Starts `arguments[0]` (searched in `$PATH` when it has no slash) with `environment`.
    /// stderr goes to /dev/null unless `inheritStandardError`, or to a pipe read after the
    /// child's stdout with `captureStandardError` (for a tool's error message, such as git's).
    /// `newSession` starts it without a controlling terminal, so it cannot prompt there
    /// (ssh-keygen then reads stdin).
    /// `executable`, when given, is the file run, and `arguments[0]` only the name the child
    /// sees (and `ps` shows).
    public init(
        _ arguments: [String], environment: Environment, inheritStandardError: Bool = false, captureStandardError: Bool = false,
        newSession: Bool = false, executable: String? = nil
    ) throws(ChildProcessError) {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0], errorPipe: [Int32] = [-1, -1]
        guard coffer_pipe_cloexec(&toChild) == 0 else { throw .launch(arguments.first ?? "", errno) }
        guard coffer_pipe_cloexec(&fromChild) == 0, !captureStandardError || coffer_pipe_cloexec(&errorPipe) == 0 else {
            let code = errno
            for fd in toChild + fromChild + errorPipe where fd > 0 { close(fd) }
            throw .launch(arguments.first ?? "", code)
        }
        var spawn = Spawn(arguments, environment: environment, executable: executable)
        spawn.newSession = newSession
        spawn.fileActions = [.duplicate(toChild[0], to: 0), .duplicate(fromChild[1], to: 1)]
        if captureStandardError {
            spawn.fileActions.append(.duplicate(errorPipe[1], to: 2))
        } else if !inheritStandardError {
            spawn.fileActions.append(.open("/dev/null", as: 2, flags: O_WRONLY))
        }
        // Nothing else of ours reaches the child: a daemon started here must not keep a
        // descriptor its parent's parent waits on (a pipe, or a launcher's exit-notification socket).
        spawn.fileActions.append(.closeFrom(3))
        defer {  // the child's ends, ours no more
            close(toChild[0])
            close(fromChild[1])
            if captureStandardError { close(errorPipe[1]) }
        }
        do { pid = try spawn.start() } catch {
            close(toChild[1]); close(fromChild[0])
            if captureStandardError { close(errorPipe[0]) }
            throw error
        }
        input = toChild[1]
        output = fromChild[0]
        errors = errorPipe[0]
        signal(SIGPIPE, SIG_IGN)  // a child that exits early must not kill us on the next write
    }

    /// Lets the child run on after this object is gone (a daemon): closes the pipes, and
    /// neither kills nor waits for it.
    public func detach() {
        closeInput()
        if output >= 0 { close(output) }
        output = -1
        exitStatus = -1
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGTERM)
            _ = wait()
        }
    }

    /// Writes `bytes` to the child's stdin.
    public func write(_ bytes: [UInt8]) throws(ChildProcessError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .io(errno) }
            offset += count
        }
    }

    public func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// The next line of the child's stdout without its newline; `nil` at the end. The line's
    /// buffer is the caller's to wipe. Lines longer than `limit` are an error.
    public func readLine(limit: Int) throws(ChildProcessError) -> [UInt8]? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                wipe(&buffered, upTo: newline + 1)
                return line
            }
            guard buffered.count <= limit else { throw .lineTooLong }
            var chunk = [UInt8](repeating: 0, count: 1024)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .io(errno) }
            if count == 0 {
                guard !buffered.isEmpty else { return nil }
                defer { wipe(&buffered, upTo: buffered.count) }
                return buffered
            }
            buffered += chunk[..<count]
            for index in chunk.indices { chunk[index] = 0 }
        }
    }

    /// Exactly `count` bytes of the child's stdout (a length-framed answer, such as one object
    /// of `git cat-file --batch`); fewer only when the child closes its stdout first.
    public func readBytes(count: Int) throws(ChildProcessError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while buffered.count < count {
            let read = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress!, min($0.count, count - buffered.count)) }
            if read < 0 && errno == EINTR { continue }
            guard read >= 0 else { throw .io(errno) }
            if read == 0 { break }
            buffered += chunk[..<read]
        }
        let taken = Array(buffered.prefix(count))
        buffered.removeFirst(taken.count)
        return taken
    }

    /// Everything left on the child's stdout (and its stderr read alongside when captured, the
    /// messages dropped); more than `limit` bytes is an error.
    public func readToEnd(limit: Int) throws(ChildProcessError) -> [UInt8] {
        try readOutputAndErrors(limit: limit, errorLimit: 0).output
    }

    /// Everything left on the child's stdout and everything it writes to stderr (a captured
    /// child), read side by side so that neither pipe can fill and stall the child: a remote
    /// that makes git complain at length must not hang Coffer. Of stderr only the last
    /// `errorLimit` bytes are kept (a message's end); stdout beyond `limit` is an error.
    public func readOutputAndErrors(limit: Int, errorLimit: Int) throws(ChildProcessError) -> (output: [UInt8], errors: [UInt8]) {
        var output: [UInt8] = []
        do {
            let errors = try streamOutput(errorLimit: errorLimit) { chunk in
                output += chunk
                guard output.count <= limit else { throw ChildProcessError.lineTooLong }
            }
            return (output, errors)
        } catch let error as ChildProcessError {
            throw error
        } catch {
            throw .io(EIO)  // unreachable: the body above throws only ChildProcessError
        }
    }

    /// The child's stdout handed to `body` piece by piece as it comes (output of any size in
    /// constant memory), its stderr read alongside as `readOutputAndErrors` does; returns the
    /// end of stderr. An error `body` throws ends the reading and is thrown as it is.
    public func streamOutput(errorLimit: Int, into body: ([UInt8]) throws -> Void) throws -> [UInt8] {
        if !buffered.isEmpty {
            let start = buffered
            buffered = []
            try body(start)
        }
        defer { if errors >= 0 { close(errors); errors = -1 } }
        var messages: [UInt8] = []
        var open: [Int32] = errors >= 0 ? [self.output, errors] : [self.output]
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty {
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw ChildProcessError.io(errno) }
            for descriptor in descriptors where descriptor.revents != 0 {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor.fd, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    open.removeAll { $0 == descriptor.fd }
                    continue
                }
                if descriptor.fd == errors {
                    messages += chunk[..<count]
                    if messages.count > errorLimit { messages.removeFirst(messages.count - errorLimit) }
                } else {
                    try body(Array(chunk[..<count]))
                }
            }
        }
        return messages
    }

    /// Whether the child has ended (its status is then kept for `wait`); never blocks.
    public func hasExited() -> Bool {
        if exitStatus != nil { return true }
        guard let code = Spawn.exitStatus(of: pid, blocking: false) else { return false }
        exitStatus = code
        return true
    }

    /// Closes both pipes (a child still writing gets EPIPE rather than blocking forever), waits
    /// for it and returns its exit status (128 + signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        closeInput()
        if output >= 0 { close(output) }
        output = -1
        if errors >= 0 { close(errors) }
        errors = -1
        let code = Spawn.exitStatus(of: pid) ?? -1
        exitStatus = code
        return code
    }

    private func wipe(_ bytes: inout [UInt8], upTo end: Int) {
        for index in 0..<end { bytes[index] = 0 }
        bytes.removeFirst(end)
    }
}

public enum ChildProcessError: Error, Equatable, Sendable, CustomStringConvertible {
    case launch(String, Int32)
    case io(Int32)
    case lineTooLong

    public var description: String {
        switch self {
        case .launch(let program, let code): "could not start \(program): \(String(cString: strerror(code)))"
        case .io(let code): "talking to a child process failed: \(String(cString: strerror(code)))"
        case .lineTooLong: "a child process sent more than expected"
        }
    }
}
