/// Text from a vault, an import or a client (a name, a user, a label, a path) made safe to show
/// to a person: every control character — C0, DEL and the C1 range — is written as `\xHH`
/// (`\u{HHHH}` for C1), as `ls` and git quote names, so a name cannot move the cursor, set the
/// window's title, write the clipboard (OSC 52), clear the screen or, with a line break, forge
/// another row of a listing. Data formats (JSON, a piped `show`) stay exact; this is for people.
public enum DisplayText {
    /// `text` with its control characters escaped.
    /// - Parameter keepingLineBreaks: leave LF and TAB as they are (a message of several lines
    ///   that Coffer itself wrote); every other control character is still escaped.
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0, keepingLineBreaks) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if isControl(scalar, keepingLineBreaks) {
                result += scalar.value < 0x80 ? "\\x" + hex(scalar.value, digits: 2) : "\\u{" + hex(scalar.value, digits: 4) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether the UTF-8 bytes hold a byte that `escaped` would change (a listing's fast path:
    /// most names hold none and are copied as they are).
    public static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Eight bytes at a time: a word with no byte below 0x20, no 0x7F and no 0xC2 (the lead
        // byte of every C1 character) needs nothing. A listing asks this three million times.
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var position = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while position + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                let below20 = (word &- ones &* 0x20) & ~word & highs != 0
                if below20 || hasZeroByte(word ^ (ones &* 0x7F)) || hasZeroByte(word ^ (ones &* 0xC2)) { return slowNeedsEscaping(bytes) }
                position += 8
            }
        }
        // The tail, and a C1 character whose lead byte ended the last word.
        return slowNeedsEscaping(UnsafeBufferPointer(rebasing: bytes[max(0, position - 1)...]))
    }

    private static func slowNeedsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return true }
            previous = byte
        }
        return false
    }

    /// The bytes of `escaped` for UTF-8 `bytes` (invalid UTF-8 is repaired as `String` does).
    public static func escapedBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard needsEscaping(bytes) else { return Array(bytes) }
        return Array(escaped(String(decoding: bytes, as: UTF8.self)).utf8)
    }

    package static func isControl(_ scalar: Unicode.Scalar, _ keepingLineBreaks: Bool) -> Bool {
        let value = scalar.value
        if keepingLineBreaks && (value == 0x0A || value == 0x09) { return false }
        return value < 0x20 || value == 0x7F || (value >= 0x80 && value <= 0x9F)
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
