import Coffer
import CofferTerminalKit
import Glibc

/// Runs the child of `coffer run` to its end: signals sent to Coffer go on to the child (a
/// terminal's Ctrl-C reaches both by itself and is not sent twice), and with a masker its
/// output and errors are copied through it. Read from a signalfd in one `poll` loop, so no
/// Swift code runs in a signal handler. Ctrl-Z is left alone: the terminal stops the child and
/// Coffer together, and `fg` continues both.
struct ForwardingRun {
    let command: [String]
    let environment: [String]
    var masker: OutputMasker?

    static let forwarded = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH]

    mutating func run() throws -> Int32 {
        let signals: SignalDescriptor
        let child: CommandChild
        do {
            signals = try SignalDescriptor(Self.forwarded + [SIGCHLD])
            child = try CommandChild(command, environment: environment, captureOutput: masker != nil)
        } catch {
            throw CLIError("\(error)", code: .osError)
        }
        var outputMasker = masker ?? OutputMasker(secrets: [])
        var errorMasker = outputMasker
        while true {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
            for stream in [child.standardOutput, child.standardError] where stream >= 0 {
                descriptors.append(pollfd(fd: stream, events: Int16(POLLIN), revents: 0))
            }
            if descriptors.count == 1, let status = child.exitStatus(wait: false) { return status }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 || errno == EINTR else { throw CLIError("poll failed", code: .osError) }
            while let (signal, sentByProcess) = signals.next() {
                if signal != SIGCHLD && (sentByProcess || signal == SIGHUP || signal == SIGTERM) { kill(child.pid, signal) }
            }
            for entry in descriptors.dropFirst() where entry.revents != 0 {
                let isOutput = entry.fd == child.standardOutput
                var chunk = [UInt8](repeating: 0, count: 65536)
                let read = chunk.withUnsafeMutableBytes { Descriptor.read(entry.fd, into: $0) }
                if case .failure(.wouldBlock) = read { continue }  // nothing yet: poll again
                let count = (try? read.get()) ?? -1
                let final = count <= 0
                let text = isOutput
                    ? outputMasker.feed(chunk.prefix(max(count, 0)), final: final)
                    : errorMasker.feed(chunk.prefix(max(count, 0)), final: final)
                Descriptor.writeAll(isOutput ? 1 : 2, text)
                if final { child.closeOutput(isOutput ? 1 : 2) }
            }
        }
    }
}
