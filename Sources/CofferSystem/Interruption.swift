import CProcessShims
import Glibc

/// Ctrl-C (SIGINT) or SIGTERM turned into a question a long write asks between its steps, so
/// that an interrupted import stops where nothing is half written and says so, instead of the
/// process vanishing with exit 130 and no word (the vault's journal would undo it anyway, at
/// the next command, which then took seconds without saying why).
public enum Interruption {
    /// Runs `body` with SIGINT and SIGTERM caught; `isInterrupted` tells `body` (and whoever
    /// it hands it to) whether one arrived. The default handling is back when it returns.
    /// - Returns: what `body` returned, and the signal that arrived meanwhile (`nil`: none).
    public static func catching<Result>(_ body: (_ isInterrupted: @escaping () -> Bool) throws -> Result) rethrows -> (Result, Int32?) {
        _ = coffer_catch_interrupts()
        defer { coffer_release_interrupts() }
        let result = try body { coffer_pending_interrupt() != 0 }
        let signal = coffer_pending_interrupt()
        return (result, signal == 0 ? nil : signal)
    }

    /// The exit status a shell gives a process ended by `signal` (130 for SIGINT).
    public static func exitStatus(for signal: Int32) -> Int32 { 128 + signal }
}
