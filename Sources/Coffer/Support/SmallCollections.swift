extension Array {
    /// The elements without later repeats, in order: for the handful of sites or buckets a
    /// request names, where a `Set` would cost more to set up than the quadratic scan.
    func uniqued(by areEqual: (Element, Element) -> Bool) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        for element in self where !result.contains(where: { areEqual($0, element) }) { result.append(element) }
        return result
    }
}
