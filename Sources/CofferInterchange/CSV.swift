import CofferProvider
import FoundationEssentials

/// RFC 4180 CSV: fields separated by commas, optionally quoted; quotes doubled inside quotes;
/// quoted fields may hold commas and line breaks. Pure.
public enum CSV {
    struct Row {
        /// 1-based line number where the row starts (what an error message names).
        let line: Int
        let fields: [String]
    }

    enum ParseError: Error, Equatable {
        case unterminatedQuote(line: Int)
        case stray(line: Int)
    }

    static func parse(_ text: String) throws(ParseError) -> [Row] {
        var rows: [Row] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var line = 1, rowStart = 1
        var fieldWasQuoted = false
        let bytes = Array((text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text).utf8)  // a byte-order mark
        var index = 0
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field = []
            fieldWasQuoted = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    guard field.isEmpty, !fieldWasQuoted else { throw .stray(line: line) }
                    inQuotes = true
                    fieldWasQuoted = true
                case UInt8(ascii: ","):
                    endField()
                case UInt8(ascii: "\r"):
                    break
                case UInt8(ascii: "\n"):
                    endField()
                    if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(line: rowStart, fields: fields)) }
                    fields = []
                    line += 1
                    rowStart = line
                default:
                    guard !fieldWasQuoted else { throw .stray(line: line) }
                    field.append(byte)
                }
            }
            index += 1
        }
        guard !inQuotes else { throw .unterminatedQuote(line: rowStart) }
        if !field.isEmpty || !fields.isEmpty || fieldWasQuoted {
            endField()
            rows.append(Row(line: rowStart, fields: fields))
        }
        return rows
    }

    /// One field as a writer must spell it: quoted when it holds a comma, quote or line break.
    public static func quote(_ field: String) -> String {
        // `isNewline`, not `== "\n"`: "\r\n" is one Character, equal to neither "\n" nor "\r".
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) || field.hasPrefix(" ") || field.hasSuffix(" ") else { return field }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }
}
