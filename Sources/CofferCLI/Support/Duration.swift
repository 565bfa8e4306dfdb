import Coffer
import CofferTerminalKit
import FoundationEssentials

/// Durations as users type them: `90`, `90s`, `15m`, `2h`, `1d`.
enum Duration {
    static func parse(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = text
        var unit = 1.0
        if let last = text.last, let multiplier = units[last] {
            unit = multiplier
            number.removeLast()
        }
        guard let value = Double(number), value > 0, value * unit <= 7 * 86400 else {
            throw UsageError("'\(text)' is not a duration between 1s and 7d (e.g. 90s, 15m, 2h)")
        }
        return value * unit
    }

    static func format(_ seconds: TimeInterval) -> String {
        let total = Int(seconds.rounded())
        if total >= 86400, total % 86400 == 0 { return "\(total / 86400)d" }
        if total >= 3600 { return "\(total / 3600)h\(total % 3600 / 60 > 0 ? "\(total % 3600 / 60)m" : "")" }
        if total >= 60 { return "\(total / 60)m\(total % 60 > 0 ? "\(total % 60)s" : "")" }
        return "\(total)s"
    }
}
