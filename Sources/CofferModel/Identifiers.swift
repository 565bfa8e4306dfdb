import CofferSupport
/// 16 random bytes written as 32 lowercase hex digits: the only spelling a reader accepts, so an
/// identifier can never smuggle `/`, `..`, NUL or a long string into a path (SPEC.md §3.2).
public protocol RandomIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The bytes as two big-endian words: an identifier costs no heap allocation (a manifest
    /// holds 512 of them, and every fill decodes one).
    var words: IdentifierWords { get }
    init(words: IdentifierWords)
}

/// The 16 bytes of an identifier; ordering the words orders the bytes lexicographically.
public struct IdentifierWords: Hashable, Comparable, Sendable {
    public let high: UInt64
    public let low: UInt64

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    @usableFromInline
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

public let identifierByteCount = 16

extension RandomIdentifier {
    /// Parses the canonical spelling, without allocating (a sync reads names of a directory of
    /// thousands of records).
    /// - Throws: `FormatError.invalidIdentifier` for anything but exactly 32 lowercase hex digits.
    public init(hex: String) throws(FormatError) {
        var text = hex
        let words = text.withUTF8 { utf8 -> IdentifierWords? in
            guard utf8.count == 2 * identifierByteCount else { return nil }
            var (high, low): (UInt64, UInt64) = (0, 0)
            for position in 0..<utf8.count {
                guard let digit = Hex.value(of: utf8[position], uppercase: false) else { return nil }
                if position < identifierByteCount { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
            }
            return IdentifierWords(high: high, low: low)
        }
        guard let words else { throw .invalidIdentifier }
        self.init(words: words)
    }

    /// From raw bytes read out of a file. Inlinable, so each caller's module specializes it for
    /// its own collection: a generic call across modules walked the bytes through protocol
    /// witnesses and cost a fill a third of its instructions.
    @inlinable
    public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws(FormatError) {
        guard bytes.count == identifierByteCount else { throw .invalidIdentifier }
        self.init(validatedBytes: bytes)
    }

    /// From exactly `identifierByteCount` bytes of an array: two big-endian loads.
    package init(validatedBytes bytes: ArraySlice<UInt8>) {
        let words = bytes.withUnsafeBytes { raw in
            IdentifierWords(high: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                            low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        self.init(words: words)
    }

    /// From exactly `identifierByteCount` bytes: two loads from contiguous storage (arrays,
    /// slices, buffers), a byte loop otherwise.
    @inlinable
    init<Bytes: Collection<UInt8>>(validatedBytes bytes: Bytes) {
        if let words = bytes.withContiguousStorageIfAvailable({ buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            return IdentifierWords(high: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                                   low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }) {
            self.init(words: words)
            return
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for (position, byte) in bytes.enumerated() {
            if position < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(words: IdentifierWords(high: high, low: low))
    }

    @inlinable
    public var bytes: [UInt8] {
        (0..<identifierByteCount).map { position in
            UInt8(truncatingIfNeeded: (position < 8 ? words.high : words.low) >> (56 - 8 * UInt64(position % 8)))
        }
    }

    /// The first byte, which names the record's shard directory and ledger slot.
    public var firstByte: UInt8 { UInt8(truncatingIfNeeded: words.high >> 56) }

    public var hex: String {
        String(unsafeUninitializedCapacity: 2 * identifierByteCount) { buffer in
            writeHex(to: buffer.baseAddress!)
            return 2 * identifierByteCount
        }
    }

    /// Writes the 32 hex digits at `destination`: a listing spells one id per row straight into
    /// its output.
    public func writeHex(to destination: UnsafeMutablePointer<UInt8>) {
        func write(_ word: UInt64, at start: Int) {
            var word = word
            for position in stride(from: start + 15, through: start, by: -1) {  // last digit first, one shift each
                let nibble = UInt8(truncatingIfNeeded: word) & 0x0f
                destination[position] = nibble &+ (nibble < 10 ? 0x30 : 0x57)  // '0'… or 'a'…
                word >>= 4
            }
        }
        write(words.high, at: 0)
        write(words.low, at: 16)
    }
    public var description: String { hex }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.words < rhs.words }
}

/// Identifies one vault; bound into every ciphertext's associated data.
public struct VaultID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}

/// Identifies one record and names its file. Apple's `recordIdentifier`, as a string.
public struct RecordID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}
