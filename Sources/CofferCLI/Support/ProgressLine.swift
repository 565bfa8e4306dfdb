import Dispatch

/// A one-line progress report on stderr for work that takes more than a second (import,
/// verify, rebuild). Silent when stderr is not a terminal, so logs and pipes stay clean.
final class ProgressLine {
    private let io: IO
    private let label: String
    private let start = DispatchTime.now().uptimeNanoseconds
    private var drawn = false

    init(io: IO, label: String) {
        self.io = io
        self.label = label
    }

    func update(_ done: Int, of total: Int) {
        guard io.standardErrorIsTerminal, DispatchTime.now().uptimeNanoseconds - start > 1_000_000_000 else { return }
        io.standardError("\r\(label) \(done)/\(total)")
        drawn = true
    }

    /// Clears the line if one was drawn.
    func finish() {
        if drawn { io.standardError("\r\u{1B}[K") }
    }
}
