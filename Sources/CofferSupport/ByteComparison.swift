/// Comparing bytes many at a time: what `memcmp` does, without the C library. Generic
/// comparisons of byte sequences go one element at a time (sorting 40,000 listing rows took
/// 50 ms that way, most of a completion; an 8 KiB manifest compared with `==` cost a fill 58,000
/// instructions). Not constant-time: never for secrets (`Sodium.constantTimeEqual`).
extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes: 32 at a time (one vector compare), then words,
    /// then the tail.
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard let mine = baseAddress, let theirs = other.baseAddress else { return true }  // both empty
        var offset = 0
        while offset + 32 <= count {
            if mine.loadUnaligned(fromByteOffset: offset, as: SIMD32<UInt8>.self)
                != theirs.loadUnaligned(fromByteOffset: offset, as: SIMD32<UInt8>.self) {
                return false
            }
            offset += 32
        }
        return Self.firstDifference(mine, theirs, from: offset, count: count) == nil
    }

    /// The byte order of the two (shorter first on a common prefix): negative, zero or positive.
    package func lexicographicOrder(_ other: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(count, other.count)
        guard common > 0, let mine = baseAddress, let theirs = other.baseAddress else { return count - other.count }
        guard let offset = Self.firstDifference(mine, theirs, from: 0, count: common) else { return count - other.count }
        return mine.load(fromByteOffset: offset, as: UInt8.self) < theirs.load(fromByteOffset: offset, as: UInt8.self) ? -1 : 1
    }

    /// The offset of the first byte in `start..<count` where the two differ: whole words first
    /// (a differing word's first differing byte is its lowest set bit of the XOR, the words
    /// being little-endian in memory), then the tail.
    private static func firstDifference(_ mine: UnsafeRawPointer, _ theirs: UnsafeRawPointer, from start: Int, count: Int) -> Int? {
        var offset = start
        while offset + 8 <= count {
            let difference = UInt64(littleEndian: mine.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                ^ UInt64(littleEndian: theirs.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if difference != 0 { return offset + difference.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < count {
            if mine.load(fromByteOffset: offset, as: UInt8.self) != theirs.load(fromByteOffset: offset, as: UInt8.self) { return offset }
            offset += 1
        }
        return nil
    }
}

extension UnsafeBufferPointer<UInt8> {
    package func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(self).hasSameBytes(as: UnsafeRawBufferPointer(other))
    }
}
