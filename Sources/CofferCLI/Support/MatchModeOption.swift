import Coffer
import CofferTerminalKit

/// `--match MODE` of `add` and `edit`: when a login may be filled without asking you (SPEC.md §8.1).
enum MatchModeOption {
    static let help = "when it fills without asking: site (any host of the registrable domain), host (the default), exact (same URL), never"

    /// Read by the library's one rule (`ItemRules.matchMode`), as `edit`'s text form reads it.
    static func parse(_ text: String?) throws -> MatchMode? {
        guard let text else { return nil }
        do { return try ItemRules.matchMode(text) } catch { throw UsageError("--\(error.reason)") }
    }
}
