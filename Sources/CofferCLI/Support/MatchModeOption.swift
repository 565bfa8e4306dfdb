import Coffer
import CofferTerminalKit

/// `--match MODE` of `add` and `edit`: when a login may be filled without asking you (SPEC.md §8.1).
enum MatchModeOption {
    static let help = "when it fills without asking: site (any host of the registrable domain), host (the default), exact (same URL), never"

    static func parse(_ text: String?) throws -> MatchMode? {
        guard let text else { return nil }
        guard let mode = MatchMode(rawValue: text) else {
            throw UsageError("unknown --match '\(text.prefix(20))'; use site, host, exact or never")
        }
        return mode
    }
}
