import CofferModel
import CofferSupport

extension String {
    /// `bytes` as a string when they are valid UTF-8, else `nil`: what `String(validating:as:)`
    /// answers, without the generic metadata that call instantiates every time (7 % of listing
    /// 10,000 identities). Decoding replaces each invalid sequence with U+FFFD, so a decoded
    /// string whose bytes are exactly the input was valid.
    package init?(strictUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        var decoded = String(decoding: bytes, as: UTF8.self)
        let identical = decoded.withUTF8 { copy in
            UnsafeRawBufferPointer(copy).hasSameBytes(as: UnsafeRawBufferPointer(bytes))
        }
        guard identical else { return nil }
        self = decoded
    }

    package init?(strictUTF8 bytes: ArraySlice<UInt8>) {
        guard let text = bytes.withUnsafeBufferPointer({ String(strictUTF8: $0) }) else { return nil }
        self = text
    }
}
