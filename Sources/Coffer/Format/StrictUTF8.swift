import Glibc

extension String {
    /// `bytes` as a string when they are valid UTF-8, else `nil`: what `String(validating:as:)`
    /// answers, without the generic metadata that call instantiates every time (7 % of listing
    /// 10,000 identities). Decoding replaces each invalid sequence with U+FFFD, so a decoded
    /// string whose bytes are exactly the input was valid.
    init?(strictUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        var decoded = String(decoding: bytes, as: UTF8.self)
        let identical = decoded.withUTF8 { copy in
            copy.count == bytes.count && (copy.isEmpty || memcmp(copy.baseAddress!, bytes.baseAddress!, copy.count) == 0)
        }
        guard identical else { return nil }
        self = decoded
    }

    init?(strictUTF8 bytes: ArraySlice<UInt8>) {
        guard let text = bytes.withUnsafeBufferPointer({ String(strictUTF8: $0) }) else { return nil }
        self = text
    }
}

extension String {
    /// Whether both strings are the same UTF-8 bytes: the equality of JSON member names and
    /// environment variables. (`==` is Unicode canonical equivalence; `utf8.elementsEqual`
    /// walks the views one index at a time.)
    func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var (a, b) = (self, other)
        return a.withUTF8 { a in b.withUTF8 { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }
}
