/// Hexadecimal digits: the one encoder and decoder for identifiers, file names and escapes.
/// Coffer writes lowercase; `decode` is strict (lowercase, even length) because identifiers are
/// compared as text, while escapes written by others (`%2F`, Assuan's `%0A`) accept either case.
package enum Hex {
    @usableFromInline static let digits: StaticString = "0123456789abcdef"  // a static table, no array access in hot loops

    /// The lowercase digit for a value 0...15.
    @inlinable @inline(__always) package static func digit(_ value: Int) -> UInt8 { digits.utf8Start[value & 0x0f] }

    /// Lowercase hex of `bytes`. The generic path instantiated type metadata at run time, which
    /// cost a fill 170,000 instructions for a 16-byte tag: arrays and buffers take the direct one.
    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode(buffer: $0) }
    }

    package static func encode(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBytes { encode(buffer: $0) }
    }

    package static func encode(buffer bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 2 * bytes.count) { output in
            for (index, byte) in zip(bytes.indices, bytes) {
                output[2 * index] = digit(Int(byte >> 4))
                output[2 * index + 1] = digit(Int(byte & 0x0f))
            }
            return 2 * bytes.count
        }
    }

    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var characters = [UInt8]()
        for byte in bytes {
            characters.append(digit(Int(byte >> 4)))
            characters.append(digit(Int(byte & 0x0f)))
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// Lowercase digits only; `nil` for odd lengths, uppercase or any other character.
    package static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(of: utf8[index], uppercase: false), let low = value(of: utf8[index + 1], uppercase: false) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one digit; uppercase `A`–`F` only when `uppercase` allows it.
    package static func value(of digit: UInt8, uppercase: Bool = true) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where uppercase: digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
