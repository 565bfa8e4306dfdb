import CSodium

/// RFC 4648 base64 through libsodium (`sodium_base642bin`, constant time): KeePass timestamps,
/// and what other hosts need.
public enum Base64 {
    /// Decodes standard base64 with padding; `nil` for anything else.
    public static func decode(_ text: String) -> [UInt8]? { decode(text, variant: sodium_base64_VARIANT_ORIGINAL) }

    /// Decodes base64url without padding (RFC 4648 §5), WebAuthn's and the Credential Exchange
    /// Format's spelling of bytes; `nil` for anything else, padding included.
    public static func decodeURL(_ text: String) -> [UInt8]? { decode(text, variant: sodium_base64_VARIANT_URLSAFE_NO_PADDING) }

    /// Decodes either spelling, as exporters write keys and ids: base64url without padding, else
    /// standard base64 with padding.
    public static func decodeEitherSpelling(_ text: String) -> [UInt8]? { decodeURL(text) ?? decode(text) }

    /// Encodes as base64url without padding.
    public static func encodeURL(_ bytes: [UInt8]) -> String { encode(bytes, variant: sodium_base64_VARIANT_URLSAFE_NO_PADDING) }

    private static func decode(_ text: String, variant: Int32) -> [UInt8]? {
        guard (try? Sodium.ready()) != nil else { return nil }
        let input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count * 3 / 4 + 3)
        var length = 0
        let status = input.withUnsafeBufferPointer { source in
            source.withMemoryRebound(to: CChar.self) {
                sodium_base642bin(&output, output.count, $0.baseAddress, $0.count, nil, &length, nil, variant)
            }
        }
        guard status == 0 else { return nil }
        return Array(output.prefix(length))
    }

    /// Decodes standard base64 straight into guarded memory (a private key file's body), so the
    /// decoded secret never sits in an ordinary array; `nil` for anything that is not base64.
    public static func decodeSecret(_ text: String) -> SecureBytes? {
        guard (try? Sodium.ready()) != nil else { return nil }
        let input = Array(text.utf8)
        guard let buffer = try? SecureBytes(count: input.count * 3 / 4 + 3) else { return nil }
        var length = 0
        let status = buffer.withUnsafeMutableBytes { output in
            input.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) {
                    sodium_base642bin(output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count, $0.baseAddress, $0.count,
                                      nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
                }
            }
        }
        guard status == 0, let secret = try? SecureBytes(count: length) else { return nil }
        secret.withUnsafeMutableBytes { destination in buffer.withUnsafeBytes { destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) } }
        return secret
    }

    public static func encode(_ bytes: [UInt8]) -> String { encode(bytes, variant: sodium_base64_VARIANT_ORIGINAL) }

    private static func encode(_ bytes: [UInt8], variant: Int32) -> String {
        guard (try? Sodium.ready()) != nil else { return "" }
        var output = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, variant))
        _ = sodium_bin2base64(&output, output.count, bytes, bytes.count, variant)
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
