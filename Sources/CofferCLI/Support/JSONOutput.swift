import Coffer
import Foundation

/// Stable JSON for `--json`: sorted keys, no escaped slashes, one document per command.
/// Written by hand: Foundation's JSONSerialization takes over a second for 10,000 identities here.
enum JSONOutput {
    static func render(_ value: Any) -> String {
        var output = ""
        write(value, to: &output)
        return output
    }

    private static func write(_ value: Any, to output: inout String) {
        switch value {
        case let text as String: writeString(text, to: &output)
        case let flag as Bool: output += flag ? "true" : "false"
        case let number as Int: output += String(number)
        case let number as Int64: output += String(number)
        case let number as UInt64: output += String(number)
        case let number as Double: output += number.isFinite ? String(number) : "null"
        case let object as [String: Any]:
            output += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                writeString(key, to: &output)
                output += ":"
                write(object[key]!, to: &output)
            }
            output += "}"
        case let object as [String: String]:
            write(object as [String: Any], to: &output)
        case let array as [Any]:
            output += "["
            for (index, element) in array.enumerated() {
                if index > 0 { output += "," }
                write(element, to: &output)
            }
            output += "]"
        default:
            output += "null"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
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
