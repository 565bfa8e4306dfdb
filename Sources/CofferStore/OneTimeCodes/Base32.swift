import COath
import CofferFormat
import Glibc

/// RFC 4648 base32, the encoding of one-time-code secrets, through liboath.
package enum Base32 {
    /// Secrets are 10–64 bytes in practice; this bounds hostile input.
    static let maximumSecretLength = 1024

    /// Decodes a secret as authenticator apps print it: case, spaces and dashes are ignored,
    /// and padding may be missing — but padding that is there must be right.
    package static func decode(_ text: String) throws(OneTimeCodeError) -> [UInt8] {
        var letters = Array(text.uppercased().utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: "\t") })
        guard !letters.isEmpty else { throw .invalidSecret("empty") }
        guard letters.count <= maximumSecretLength * 8 / 5 + 8 else { throw .invalidSecret("longer than \(maximumSecretLength) bytes") }
        if let firstPad = letters.firstIndex(of: UInt8(ascii: "=")) {
            guard letters[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }), letters.count % 8 == 0 else {
                throw .invalidSecret("bad padding")
            }
            letters.removeSubrange(firstPad...)
        }
        // Lengths base32 cannot produce (1, 3 or 6 letters left over) are not a secret.
        guard ![1, 3, 6].contains(letters.count % 8) else { throw .invalidSecret("bad length") }
        while letters.count % 8 != 0 { letters.append(UInt8(ascii: "=")) }
        var output: UnsafeMutablePointer<CChar>?
        var length = 0
        let status = letters.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { oath_base32_decode($0.baseAddress, $0.count, &output, &length) }
        }
        defer { free(output) }
        guard status == Int32(OATH_OK.rawValue), let output else { throw .invalidSecret("not base32") }
        let secret = Array(UnsafeRawBufferPointer(start: output, count: length))
        memset(output, 0, length)
        guard !secret.isEmpty else { throw .invalidSecret("empty") }
        return secret
    }

    package static func encode(_ bytes: [UInt8]) -> String {
        var output: UnsafeMutablePointer<CChar>?
        var length = 0
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { oath_base32_encode($0.baseAddress, $0.count, &output, &length) }
        }
        defer { free(output) }
        guard status == Int32(OATH_OK.rawValue), let output else { return "" }
        // Stored without padding, as authenticator URIs write it.
        return String(decoding: UnsafeRawBufferPointer(start: output, count: length), as: UTF8.self)
            .filter { $0 != "=" }
    }
}
