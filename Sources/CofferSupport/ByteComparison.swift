// libc's memcmp, the one part of the C library this file uses (no system call: the kernel is
// CofferSystem's). Vectorised by glibc; a Swift loop over words cost a fill 2 % more.
import func Glibc.memcmp

/// Comparing bytes the way `memcmp` does: generic comparisons of byte sequences go one element
/// at a time (sorting 40,000 listing rows took 50 ms that way, most of a completion; an 8 KiB
/// manifest compared with `==` cost a fill 58,000 instructions). The one place Coffer compares
/// raw bytes. Not constant-time: never for secrets (`Sodium.constantTimeEqual`).
extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes.
    @inlinable
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let mine = baseAddress, let theirs = other.baseAddress else { return true }
        return memcmp(mine, theirs, count) == 0
    }

    /// The byte order of the two (shorter first on a common prefix): negative, zero or positive.
    @inlinable
    package func lexicographicOrder(_ other: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(count, other.count)
        guard common > 0, let mine = baseAddress, let theirs = other.baseAddress else { return count - other.count }
        let order = Int(memcmp(mine, theirs, common))
        return order != 0 ? order : count - other.count
    }
}

extension UnsafeBufferPointer<UInt8> {
    @inlinable
    package func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(self).hasSameBytes(as: UnsafeRawBufferPointer(other))
    }
}
