/// Byte collections that can lend contiguous storage: `[UInt8]`, `ArraySlice<UInt8>`.
public protocol ContiguousBytesCollection {
    func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension Array: ContiguousBytesCollection where Element == UInt8 {
    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension ArraySlice: ContiguousBytesCollection where Element == UInt8 {
    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension UnsafeRawBufferPointer: ContiguousBytesCollection {
    public func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { body(self) }
}
