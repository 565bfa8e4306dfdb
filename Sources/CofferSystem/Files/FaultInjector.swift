import Glibc
import Synchronization

/// Makes the file layer fail at a chosen mutating step, so tests can prove that a write torn at
/// any point leaves the old state or the new one (KeePassXC's failing-device idea).
///
/// Steps are counted across `write temp file`, `rename` and `unlink`; step `failAt` throws
/// `StorageError.injectedFault` instead of happening.
public final class FaultInjector: Sendable {
    private let state: Mutex<(steps: Int, failAt: Int?)>
    /// Instead of throwing, die with SIGKILL at the chosen step: a crash, for the multi-process
    /// crash tests (only their test-only writer sets it).
    let crashes: Bool

    public init(failAt step: Int?, crashing: Bool = false) {
        state = Mutex((0, step))
        crashes = crashing
    }

    /// How many mutating steps have run (or been refused) so far.
    public var steps: Int { state.withLock { $0.steps } }

    /// Chooses the step to fail at and resets the count.
    public func arm(failAt step: Int?) {
        state.withLock { $0 = (0, step) }
    }

    /// What reached the directory layer, in order, for the durability tests: a directory made,
    /// an entry unlinked, a directory fsynced (each with its path). POSIX keeps a new name or an
    /// unlink through a power loss only once its directory is fsynced.
    public enum DirectoryEvent: Equatable, Sendable {
        case made(String), unlinked(String), synced(String)
    }

    private let log = Mutex<[DirectoryEvent]>([])

    public var directoryEvents: [DirectoryEvent] { log.withLock { $0 } }

    func note(_ event: DirectoryEvent) {
        log.withLock { $0.append(event) }
    }

    func step() throws(StorageError) {
        let failing: Int? = state.withLock { current in
            current.steps += 1
            return current.steps == current.failAt ? current.steps : nil
        }
        if let failing {
            if crashes { kill(getpid(), SIGKILL) }
            throw .injectedFault(step: failing)
        }
    }
}
