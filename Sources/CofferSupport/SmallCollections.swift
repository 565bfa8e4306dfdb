
extension Array {
    /// The elements without later repeats, in order: for the handful of sites or buckets a
    /// request names, where a `Set` would cost more to set up than the quadratic scan.
    package func uniqued(by areEqual: (Element, Element) -> Bool) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        for element in self where !result.contains(where: { areEqual($0, element) }) { result.append(element) }
        return result
    }
}

extension Array where Element == UInt8 {
    /// Whether both arrays hold the same bytes, eight at a time: `==` on `[UInt8]` compares one
    /// element at a time (an 8 KiB manifest took 58,000 instructions, 5 % of a fill).
    package func hasSameBytes(as other: [UInt8]) -> Bool {
        count == other.count && withUnsafeBytes { a in other.withUnsafeBytes { b in a.hasSameBytes(as: b) } }
    }
}
