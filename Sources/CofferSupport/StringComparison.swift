
extension String {
    /// Whether both strings are the same UTF-8 bytes: the equality of JSON member names and
    /// environment variables. (`==` is Unicode canonical equivalence; `utf8.elementsEqual`
    /// walks the views one index at a time.)
    package func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var (a, b) = (self, other)
        return a.withUTF8 { a in b.withUTF8 { b in UnsafeRawBufferPointer(a).hasSameBytes(as: UnsafeRawBufferPointer(b)) } }
    }

    /// Padded on the left with zeros to `length` characters (a tar header's octal numbers, a
    /// percent-escape's two hex digits).
    package func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
