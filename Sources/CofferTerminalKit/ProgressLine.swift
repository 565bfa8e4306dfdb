import CofferProvider
import CofferHostKit
import Dispatch
import Synchronization

/// A one-line progress report on stderr for a long step (SPEC.md §10: import, export, backup,
/// verify, restore, a sensitive KDF): drawn by a timer from a quarter second on, so a step done
/// sooner prints nothing, and a step that cannot report counts (Argon2id in one C call) still
/// shows it is working. Never drawn when stderr is not a terminal or with `--json`: logs and
/// pipes stay clean.
package final class ProgressLine: @unchecked Sendable {
    // @unchecked: `timer` is set once in init and only cancelled after; the rest is behind `state`.

    private struct State {
        package var done = 0
        package var total = 0
        package var drawn = false
        package var finished = false
    }

    private let io: IO
    private let label: String
    private let state = Mutex(State())
    private let timer: DispatchSourceTimer?

    package static let delay = DispatchTimeInterval.milliseconds(250)

    package init(io: IO, label: String, enabled: Bool = true) {
        self.io = io
        self.label = label
        guard enabled, io.standardErrorIsTerminal else {
            timer = nil
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        self.timer = timer
        timer.schedule(deadline: .now() + Self.delay, repeating: Self.delay)
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    deinit { finish() }

    /// Counts for the next draw ("importing 4200/10000").
    package func update(_ done: Int, of total: Int) {
        state.withLock {
            $0.done = done
            $0.total = total
        }
    }

    /// Counts one more of `total` done, from any thread (parts worked on several at once).
    package func advance(of total: Int) {
        state.withLock {
            $0.done += 1
            $0.total = total
        }
    }

    /// Stops drawing and clears the line if one was drawn; call before printing anything else.
    package func finish() {
        timer?.cancel()
        state.withLock {
            if $0.drawn && !$0.finished { io.standardError("\r\u{1B}[K") }
            $0.finished = true
        }
    }

    private func draw() {
        state.withLock {
            guard !$0.finished else { return }
            io.standardError($0.total > 0 ? "\r\(label) \($0.done)/\($0.total)\u{1B}[K" : "\r\(label)…\u{1B}[K")
            $0.drawn = true
        }
    }
}
