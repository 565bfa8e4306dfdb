import Coffer
import CofferTerminalKit

/// Runs the child of `coffer run` to its end: signals sent to Coffer go on to the child (a
/// terminal's Ctrl-C reaches both by itself and is not sent twice), and with a masker its
/// output and errors are copied through it. Read from a signalfd in one `poll` loop, so no
/// Swift code runs in a signal handler. Ctrl-Z is left alone: the terminal stops the child and
/// Coffer together, and `fg` continues both.
struct ForwardingRun {
    let command: [String]
    let environment: [String]
    var masker: OutputMasker?

    mutating func run() throws -> Int32 {
        let signals: SignalDescriptor
        let child: CommandChild
        do {
            signals = try SignalDescriptor(CommandChild.forwardedSignals + [SignalDescriptor.childEnded])
            child = try CommandChild(command, environment: environment, captureOutput: masker != nil)
        } catch {
            throw CLIError("\(error)", code: .osError)
        }
        var outputMasker = masker ?? OutputMasker(secrets: [])
        var errorMasker = outputMasker
        do {
            return try child.runForwardingSignals(signals) { stream, chunk, final in
                stream == 1 ? outputMasker.feed(chunk, final: final) : errorMasker.feed(chunk, final: final)
            }
        } catch {
            throw CLIError("poll failed: \(error)", code: .osError)
        }
    }
}
