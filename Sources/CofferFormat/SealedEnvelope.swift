import CofferModel
import CofferSupport
/// The shape shared by every sealed Coffer file: preamble, 24-byte nonce, AEAD ciphertext with
/// tag (SPEC.md §3.3). Each file type adds its own length rules and associated data.
public struct SealedEnvelope: Equatable, Sendable {
    public static let headerLength = FileMagic.length + 24
    public static let tagLength = 16

    public var type: FileType
    /// The preamble's version byte (1, or 2 for a manifest of index layout 2).
    public var version: UInt8
    public var nonce: [UInt8]
    public var ciphertext: [UInt8]

    public init(type: FileType, version: UInt8 = FileMagic.formatVersion, nonce: [UInt8], ciphertext: [UInt8]) {
        self.type = type
        self.version = version
        self.nonce = nonce
        self.ciphertext = ciphertext
    }

    public func encoded() -> [UInt8] {
        FileMagic.bytes(for: type, version: version) + nonce + ciphertext
    }

    /// Splits a file of `type`; `validLength` adds the type's own size rule.
    public static func decode(
        _ bytes: [UInt8], as type: FileType, validLength: (Int) -> Bool = { _ in true }
    ) throws(FormatError) -> SealedEnvelope {
        let version = try FileMagic.check(bytes, is: type)
        guard bytes.count >= headerLength + tagLength, validLength(bytes.count) else { throw .badLength }
        return SealedEnvelope(type: type, version: version, nonce: Array(bytes[8..<32]), ciphertext: Array(bytes[32...]))
    }

    /// `preamble(type, version) ‖ vault id`, the associated-data prefix of every sealed file: the
    /// version is authenticated, so a manifest cannot be passed off as another layout.
    public static func associatedData(_ type: FileType, version: UInt8 = FileMagic.formatVersion, vaultID: VaultID) -> [UInt8] {
        FileMagic.bytes(for: type, version: version) + vaultID.bytes
    }
}

/// Reads fixed-layout fields with bounds checks; running past the end is `badLength`.
package struct ByteReader {
    private let bytes: [UInt8]
    package private(set) var offset: Int
    /// Where the part being read ends (the whole array unless a range was given).
    private let end: Int

    package init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        offset = range?.lowerBound ?? 0
        end = range?.upperBound ?? bytes.count
    }

    package var isAtEnd: Bool { offset == end }

    package mutating func take(_ count: Int) throws(FormatError) -> ArraySlice<UInt8> {
        guard count >= 0, end - offset >= count else { throw .badLength }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    package mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws(FormatError) -> T {
        let start = offset
        _ = try take(MemoryLayout<T>.size)
        return LittleEndian.read(T.self, from: bytes, at: start)
    }

    package mutating func lengthPrefixedBytes() throws(FormatError) -> ArraySlice<UInt8> {
        try take(Int(try integer(UInt16.self)))
    }
}

extension Array where Element == UInt8 {
    /// Inlinable and without an array between: writing a million listing rows through an
    /// `[UInt8]` per integer made allocation a large part of the first listing of a vault.
    @inlinable
    package mutating func append<T: FixedWidthInteger>(littleEndian value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    @inlinable
    package mutating func append<T: FixedWidthInteger>(bigEndian value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// A u16-length-prefixed UTF-8 string; callers keep strings under 64 KiB.
    mutating func append(lengthPrefixed text: String) {
        let utf8 = Array(text.utf8.prefix(Int(UInt16.max)))
        append(littleEndian: UInt16(utf8.count))
        append(contentsOf: utf8)
    }
}
