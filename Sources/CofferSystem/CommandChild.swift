import CLinux
import Glibc

/// A command run on the user's behalf (`coffer run`): spawned with the environment Coffer
/// built — the only place its secrets go — and a clean signal mask, its standard output and
/// error inherited or, to be masked, on pipes. Arguments are the user's own and carry no secret.
public final class CommandChild {
    public let pid: pid_t
    /// Read ends of the child's stdout and stderr when captured; -1 once closed.
    public private(set) var standardOutput: Int32 = -1
    public private(set) var standardError: Int32 = -1
    private var status: Int32?

    /// Starts `arguments[0]` (searched in `PATH` of `environment` when it has no slash).
    /// - Parameter environment: `NAME=value` entries; wiped from the C copies after the spawn.
    public init(_ arguments: [String], environment: [String], captureOutput: Bool) throws(ChildProcessError) {
        guard let program = arguments.first else { throw .launch("", EINVAL) }
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        var spawn = Spawn(arguments, environment: environment)
        spawn.wipeEnvironment = true
        if captureOutput {
            guard coffer_pipe_cloexec(&outputPipe) == 0 else { throw .launch(program, errno) }
            guard coffer_pipe_cloexec(&errorPipe) == 0 else {
                close(outputPipe[0]); close(outputPipe[1])
                throw .launch(program, errno)
            }
            spawn.fileActions = [.duplicate(outputPipe[1], to: 1), .duplicate(errorPipe[1], to: 2)]
        }
        // The parent blocks the signals it forwards; the child starts with none blocked and
        // default dispositions (Spawn's attributes).
        defer {  // the child's ends, ours no more
            if captureOutput { close(outputPipe[1]); close(errorPipe[1]) }
        }
        do { pid = try spawn.start() } catch {
            if captureOutput { close(outputPipe[0]); close(errorPipe[0]) }
            throw error
        }
        if captureOutput {
            standardOutput = outputPipe[0]
            standardError = errorPipe[0]
        }
    }

    deinit {
        closeOutput(1)
        closeOutput(2)
    }

    public func closeOutput(_ stream: Int32) {
        if stream == 1, standardOutput >= 0 { close(standardOutput); standardOutput = -1 }
        if stream == 2, standardError >= 0 { close(standardError); standardError = -1 }
    }

    /// The exit status once the child has ended (128 + signal when killed, as shells report
    /// it), without waiting; `nil` while it runs.
    public func exitStatus(wait: Bool) -> Int32? {
        if let status { return status }
        guard let code = Spawn.exitStatus(of: pid, blocking: wait) else { return nil }
        status = code
        return code
    }

    /// The signals a run passes on to its child: what a terminal, a service manager or a
    /// script sends to end, stop reading or resize it.
    public static let forwardedSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH]

    /// Waits for the child's end in one `poll` loop over a signalfd and its captured output:
    /// signals sent to this process go on to the child (a terminal's Ctrl-C, which reaches both
    /// by itself, is not sent twice), and each chunk of captured output or error passes through
    /// `pass` to this process's own. No Swift code runs in a signal handler.
    /// - Parameter pass: the stream (1 or 2), a chunk read from it, and whether it is the last;
    ///   returns the bytes to write on.
    /// - Returns: the exit status (128 + signal when killed).
    public func runForwardingSignals(
        _ signals: SignalDescriptor, passing pass: (_ stream: Int32, _ chunk: ArraySlice<UInt8>, _ final: Bool) -> [UInt8]
    ) throws(Errno) -> Int32 {
        while true {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
            for stream in [standardOutput, standardError] where stream >= 0 {
                descriptors.append(pollfd(fd: stream, events: Int16(POLLIN), revents: 0))
            }
            if descriptors.count == 1, let status = exitStatus(wait: false) { return status }
            if case .failure(let failure) = SystemCall.retryingInterrupts({ poll(&descriptors, nfds_t(descriptors.count), -1) }) {
                throw failure
            }
            while let (signal, sentByProcess) = signals.next() {
                if signal != SIGCHLD && (sentByProcess || signal == SIGHUP || signal == SIGTERM) { kill(pid, signal) }
            }
            for entry in descriptors.dropFirst() where entry.revents != 0 {
                let stream: Int32 = entry.fd == standardOutput ? 1 : 2
                var chunk = [UInt8](repeating: 0, count: 65536)
                let read = chunk.withUnsafeMutableBytes { Descriptor.read(entry.fd, into: $0) }
                if case .failure(.wouldBlock) = read { continue }  // nothing yet: poll again
                let count = (try? read.get()) ?? -1
                let final = count <= 0
                Descriptor.writeAll(stream, pass(stream, chunk.prefix(max(count, 0)), final))
                if final { closeOutput(stream) }
            }
        }
    }
}
