/// RFC 3986 percent-encoding: the one decoder and encoder for every URI component Coffer reads
/// or writes (`otpauth://` labels and parameters, `coffer://` references) and for Assuan's data
/// lines, which escape the same way.
package enum PercentEncoding {
    package static func decode<S: StringProtocol>(_ text: S) -> String? {
        decodeBytes(Array(text.utf8)[...]).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The bytes behind `%XX` escapes (either case); `nil` for a truncated or non-hex escape.
    package static func decodeBytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap({ Hex.value(of: $0) }), let low = iterator.next().flatMap({ Hex.value(of: $0) }) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    package static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "-._~@".utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}
