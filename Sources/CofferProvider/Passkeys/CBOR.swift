import CofferStore
import CofferFormat
/// The part of CBOR (RFC 8949) an authenticator writes: integers, byte and text strings, arrays
/// and maps, in CTAP2's canonical form — shortest lengths, definite lengths, map keys ordered by
/// their encodings (shorter first, then byte by byte; CTAP2 §8 "CTAP2 canonical CBOR encoding").
/// Coffer only ever encodes (attestation objects and COSE keys); it never parses CBOR, so a small
/// encoder with vectors serves better than loading libcbor.
public indirect enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The negative integer −1 − n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(CBOR, CBOR)])

    public static func integer(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    private func encode(into bytes: inout [UInt8]) {
        switch self {
        case .unsigned(let value): Self.head(0, value, &bytes)
        case .negative(let value): Self.head(1, value, &bytes)
        case .bytes(let value):
            Self.head(2, UInt64(value.count), &bytes)
            bytes += value
        case .text(let value):
            Self.head(3, UInt64(value.utf8.count), &bytes)
            bytes += value.utf8
        case .array(let elements):
            Self.head(4, UInt64(elements.count), &bytes)
            for element in elements { element.encode(into: &bytes) }
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), &bytes)
            let encodedPairs = pairs.map { ($0.0.encoded, $0.1.encoded) }.sorted { a, b in
                a.0.count != b.0.count ? a.0.count < b.0.count : a.0.lexicographicallyPrecedes(b.0)
            }
            for (key, value) in encodedPairs { bytes += key + value }
        }
    }

    /// A major type and its argument in the shortest form.
    private static func head(_ major: UInt8, _ value: UInt64, _ bytes: inout [UInt8]) {
        let type = major << 5
        switch value {
        case 0..<24: bytes.append(type | UInt8(value))
        case 24...0xFF: bytes += [type | 24, UInt8(value)]
        case 0x100...0xFFFF: bytes += [type | 25] + withUnsafeBytes(of: UInt16(value).bigEndian, Array.init)
        case 0x1_0000...0xFFFF_FFFF: bytes += [type | 26] + withUnsafeBytes(of: UInt32(value).bigEndian, Array.init)
        default: bytes += [type | 27] + withUnsafeBytes(of: value.bigEndian, Array.init)
        }
    }

    public static func == (lhs: CBOR, rhs: CBOR) -> Bool { lhs.encoded == rhs.encoded }
}
