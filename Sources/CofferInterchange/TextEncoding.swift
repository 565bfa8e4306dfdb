/// The text of an export, decoded exactly: import never changes a byte of a secret (SPEC.md §12).
/// Input that is not valid in its encoding is refused, naming the line and column (never the
/// value), instead of being "repaired" with U+FFFD, which would silently replace a password.
import CofferProvider
public enum TextEncoding: String, CaseIterable, Sendable {
    /// The default. A byte-order mark is accepted and dropped.
    case utf8 = "utf-8"
    /// ISO 8859-1: every byte is the code point of the same value.
    case latin1
    /// Windows code page 1252: Latin-1 with printable characters in 0x80–0x9F; its five
    /// undefined bytes are refused.
    case windows1252 = "windows-1252"
    /// UTF-16 with a byte-order mark (little endian without one, as Windows writes it).
    case utf16 = "utf-16"

    /// Decodes `bytes`; NUL is refused in every encoding (no export has one in a field, and C
    /// tools would cut a password there).
    /// - Throws: `ImportError.malformed` naming the line and column of the first bad byte.
    public func decode(_ bytes: [UInt8]) throws(ImportError) -> String {
        // Nearly every export is valid UTF-8 without NUL: checked in bulk (the standard
        // library's validation, `memchr`), and only a file that fails is walked scalar by
        // scalar to name the line and column (a 10,000-item export took 0.4 s that way).
        if self == .utf8, !bytes.contains(0) {
            let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
            if let text = String(validating: body, as: UTF8.self) { return text }
        }
        return try decodeNamingTheFirstBadByte(bytes)
    }

    private func decodeNamingTheFirstBadByte(_ bytes: [UInt8]) throws(ImportError) -> String {
        var scalars = String.UnicodeScalarView()
        var line = 1, column = 1
        func accept(_ scalar: Unicode.Scalar) throws(ImportError) {
            guard scalar.value != 0 else { throw .malformed(line: line, "column \(column): a NUL character") }
            scalars.append(scalar)
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        func refuse(_ what: String) -> ImportError {
            .malformed(line: line, "column \(column): \(what); nothing was imported (name the file's encoding with --encoding)")
        }
        switch self {
        case .utf8:
            var body = bytes[...]
            if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
            var decoder = UTF8()
            var iterator = body.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): try accept(scalar)
                case .emptyInput: break loop
                case .error: throw refuse("not valid UTF-8 (an invalid, overlong or surrogate sequence)")
                }
            }
        case .latin1:
            for byte in bytes { try accept(Unicode.Scalar(byte)) }
        case .windows1252:
            for byte in bytes {
                guard let scalar = Self.windows1252(byte) else { throw refuse("byte 0x\(String(byte, radix: 16)) has no character in windows-1252") }
                try accept(scalar)
            }
        case .utf16:
            guard bytes.count % 2 == 0 else { throw refuse("an odd number of bytes for UTF-16") }
            var bigEndian = false
            var units = stride(from: 0, to: bytes.count, by: 2).map { (UInt16(bytes[$0]), UInt16(bytes[$0 + 1])) }
            if let first = units.first, first == (0xFE, 0xFF) || first == (0xFF, 0xFE) {
                bigEndian = first == (0xFE, 0xFF)
                units.removeFirst()
            }
            var decoder = UTF16()
            var iterator = units.map { bigEndian ? $0.0 << 8 | $0.1 : $0.1 << 8 | $0.0 }.makeIterator()
            loop: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): try accept(scalar)
                case .emptyInput: break loop
                case .error: throw refuse("not valid UTF-16 (an unpaired surrogate)")
                }
            }
        }
        return String(scalars)
    }

    /// 0x80–0x9F of code page 1252 (the rest is Latin-1); `nil` for the five undefined bytes.
    private static func windows1252(_ byte: UInt8) -> Unicode.Scalar? {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        let table: [UInt32] = [
            0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
            0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
        ]
        let value = table[Int(byte - 0x80)]
        return value == 0 ? nil : Unicode.Scalar(value)
    }
}
