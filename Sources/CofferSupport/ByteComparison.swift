/// Comparing bytes eight at a time: what `memcmp` does, without the C library. Generic
/// comparisons of byte sequences go one element at a time (sorting 40,000 listing rows took
/// 50 ms that way, most of a completion). Not constant-time: never for secrets
/// (`Sodium.constantTimeEqual`).
extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes.
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && compareBytes(other, count: count) == 0
    }

    /// The byte order of the two (shorter first on a common prefix): negative, zero or positive.
    package func lexicographicOrder(_ other: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(count, other.count)
        let order = compareBytes(other, count: common)
        return order != 0 ? order : count - other.count
    }

    /// The order of the first `count` bytes of each: whole words first (read big-endian, so a
    /// word compares as its bytes do), then the tail.
    private func compareBytes(_ other: UnsafeRawBufferPointer, count: Int) -> Int {
        var offset = 0
        while offset + 8 <= count {
            let mine = UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let theirs = UInt64(bigEndian: other.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if mine != theirs { return mine < theirs ? -1 : 1 }
            offset += 8
        }
        while offset < count {
            if self[offset] != other[offset] { return self[offset] < other[offset] ? -1 : 1 }
            offset += 1
        }
        return 0
    }
}

extension UnsafeBufferPointer<UInt8> {
    package func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(self).hasSameBytes(as: UnsafeRawBufferPointer(other))
    }
}
