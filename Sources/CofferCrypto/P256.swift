import CCrypto

/// An ECDSA P-256 signing key with SHA-256 (COSE ES256, −7: what nearly every WebAuthn relying
/// party asks for), through OpenSSL's libcrypto — the one place Coffer uses it; everything else is
/// libsodium. Keys travel as PKCS#8 DER (RFC 5958), the form Bitwarden's and the Credential
/// Exchange Format's passkeys use, so an import stores what it read.
///
/// The secret scalar lives inside OpenSSL's key object while one exists (OpenSSL clears it on
/// free); callers keep the object only for one signature.
public final class P256SigningKey {
    /// The uncompressed public point's coordinates (32 bytes each): what a COSE key carries.
    public let x: [UInt8]
    public let y: [UInt8]
    private let key: OpaquePointer

    /// A fresh key from OpenSSL's CSPRNG.
    public static func generate() throws(CryptoError) -> P256SigningKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .allocationFailed }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key
        else { throw .keyDerivationFailed }
        return try P256SigningKey(owning: key)
    }

    /// The key a PKCS#8 `PrivateKeyInfo` holds. Refused (`.invalidKey`) unless it is an EC key on
    /// P-256 whose scalar is in range and whose public point, when stored, is on the curve and
    /// follows from the scalar (`EVP_PKEY_check`): signing with anything else would hand a
    /// relying party signatures nobody can verify.
    public convenience init(pkcs8 der: [UInt8]) throws(CryptoError) {
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else { return nil }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { return nil }  // nothing after the DER
            return EVP_PKCS82PKEY(info)
        }
        ERR_clear_error()
        guard let decoded else { throw .invalidKey }
        try self.init(checking: decoded)
    }

    private convenience init(checking key: OpaquePointer) throws(CryptoError) {
        var name = [CChar](repeating: 0, count: 32)
        var length = 0
        let isP256 = EVP_PKEY_get_base_id(key) == EVP_PKEY_EC
            && EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &length) == 1
            && ["prime256v1", "P-256"].contains(String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)
        defer { EVP_PKEY_CTX_free(context) }
        guard isP256, let context, EVP_PKEY_check(context) == 1 else {
            ERR_clear_error()
            EVP_PKEY_free(key)
            throw .invalidKey
        }
        try self.init(owning: key)
    }

    private init(owning key: OpaquePointer) throws(CryptoError) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &point, point.count, &length) == 1, length == 65, point[0] == 4 else {
            ERR_clear_error()
            EVP_PKEY_free(key)
            throw .invalidKey
        }
        self.key = key
        x = Array(point[1..<33])
        y = Array(point[33..<65])
    }

    deinit { EVP_PKEY_free(key) }

    /// The key as PKCS#8 DER, to store in a sealed record.
    public func pkcs8() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(key) else { throw .invalidKey }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw .invalidKey }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else { throw .invalidKey }
        return der
    }

    /// Whether `signature` (DER) is the ES256 signature of `message` by the key of `subjectPublicKeyInfo`.
    public static func isValidSignature(_ signature: [UInt8], of message: [UInt8], subjectPublicKeyInfo: [UInt8]) -> Bool {
        let key: OpaquePointer? = subjectPublicKeyInfo.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        defer { ERR_clear_error() }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    /// An ECDSA signature of SHA-256(`message`), DER-encoded (`Ecdsa-Sig-Value`), as WebAuthn's
    /// ES256 assertions carry it.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .allocationFailed }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
              EVP_DigestSign(context, nil, &length, message, message.count) == 1
        else { throw .invalidKey }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else { throw .invalidKey }
        return Array(signature.prefix(length))
    }
}
