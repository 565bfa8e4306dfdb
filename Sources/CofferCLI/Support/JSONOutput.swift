import Coffer
import Foundation

/// Stable JSON for `--json`: sorted keys, no escaped slashes, one document per command.
enum JSONOutput {
    static func render(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// An identity as `list --json` prints it (the CLI contract's field names).
    static func identity(_ identity: PasswordCredentialIdentity) -> [String: Any] {
        [
            "serviceIdentifier": ["identifier": identity.serviceIdentifier.identifier, "type": identity.serviceIdentifier.type.rawValue],
            "user": identity.user, "recordIdentifier": identity.recordIdentifier, "rank": identity.rank,
        ]
    }

    static func date(_ date: Date) -> String {
        UTCTimestamp.format(date)
    }
}
