import Foundation

/// Stable JSON for `--json`: sorted keys, no escaped slashes, one document per command.
enum JSONOutput {
    static func render(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    static func date(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
