import CCrypto

/// The Secret Service's encrypted session, `dh-ietf1024-sha256-aes128-cbc-pkcs7` (what libsecret
/// opens by default): Diffie-Hellman in RFC 2409's 1024-bit MODP group (the "Second Oakley
/// Group", generator 2), HKDF-SHA256 of the shared secret — left-padded to 128 bytes, no salt,
/// no info — to a 16-byte key, and each secret AES-128-CBC with PKCS#7 padding under a fresh
/// random IV (SPEC.md §17.2). All through OpenSSL's libcrypto, as gnome-keyring's egg-dh and
/// Python's secretstorage do it with theirs.
///
/// The session exists to keep secrets off the bus in the clear, not from the bus's own daemon:
/// the group is weak by today's measure, and the protocol cannot name a stronger one.
public final class SecretSessionCipher {
    private let key: SecureBytes
    /// Our public value, big-endian without leading zeros: what `OpenSession` answers.
    public let publicKey: [UInt8]

    package static let primeLength = 128

    /// A session with the peer whose public value is `peerPublicKey` (big-endian). Refused
    /// (`.invalidKey`) unless 1 < y < p − 1: a value of 0, 1 or p − 1 forces the shared secret.
    public init(peerPublicKey: [UInt8]) throws(CryptoError) {
        let pair = try Self.keyPair()
        defer { BN_clear_free(pair.secret) }
        publicKey = pair.publicKey
        key = try Self.sessionKey(secret: pair.secret, peerPublicKey: peerPublicKey)
    }

    /// The client's side (`coffer import --from secret-service`): our public value first, the
    /// service's answer second.
    public static func client() throws(CryptoError) -> (publicKey: [UInt8], complete: ([UInt8]) throws(CryptoError) -> SecretSessionCipher) {
        let pair = try keyPair()
        let secret = pair.secret
        return (pair.publicKey, { (peer: [UInt8]) throws(CryptoError) -> SecretSessionCipher in
            defer { BN_clear_free(secret) }
            return SecretSessionCipher(key: try sessionKey(secret: secret, peerPublicKey: peer), publicKey: pair.publicKey)
        })
    }

    private init(key: SecureBytes, publicKey: [UInt8]) {
        self.key = key
        self.publicKey = publicKey
    }

    /// `plaintext` encrypted under a fresh IV: (IV, ciphertext), the Secret struct's
    /// `parameters` and `value`.
    public func encrypt(_ plaintext: [UInt8]) throws(CryptoError) -> (iv: [UInt8], ciphertext: [UInt8]) {
        var iv = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&iv, 16) == 1 else { throw .initializationFailed }
        return (iv, try crypt(plaintext, iv: iv, encrypting: true))
    }

    /// The plaintext of (`iv`, `ciphertext`); `.authenticationFailed` for a wrong IV length, a
    /// length that is no multiple of 16 or bad padding (CBC has no integrity of its own: a
    /// wrong key shows only as padding, or as garbage).
    public func decrypt(iv: [UInt8], ciphertext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard iv.count == 16, !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw .authenticationFailed }
        return try crypt(ciphertext, iv: iv, encrypting: false)
    }

    private func crypt(_ input: [UInt8], iv: [UInt8], encrypting: Bool) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw .allocationFailed }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0, final: Int32 = 0
        let ok = key.withUnsafeBytes { key in
            EVP_CipherInit_ex(context, EVP_aes_128_cbc(), nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self), iv, encrypting ? 1 : 0) == 1
                && EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)) == 1
                && output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &final) } == 1
        }
        ERR_clear_error()
        guard ok else {
            for index in output.indices { output[index] = 0 }
            throw encrypting ? .initializationFailed : .authenticationFailed
        }
        output.removeSubrange(Int(written + final)...)
        return output
    }

    // MARK: Diffie-Hellman and HKDF

    private static func keyPair() throws(CryptoError) -> (secret: OpaquePointer, publicKey: [UInt8]) {
        guard let prime = BN_get_rfc2409_prime_1024(nil), let context = BN_CTX_new(), let secret = BN_secure_new(),
              let generator = BN_new(), let publicValue = BN_new()
        else { throw .allocationFailed }
        defer { BN_free(prime); BN_CTX_free(context); BN_free(generator); BN_free(publicValue) }
        // A private exponent of 1023 random bits (below p), as gnome-keyring's egg-dh draws it.
        guard BN_set_word(generator, 2) == 1, BN_priv_rand(secret, 1023, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1,
              BN_mod_exp(publicValue, generator, secret, prime, context) == 1
        else {
            BN_clear_free(secret)
            throw .keyDerivationFailed
        }
        return (secret, bytes(of: publicValue))
    }

    private static func sessionKey(secret: OpaquePointer, peerPublicKey: [UInt8]) throws(CryptoError) -> SecureBytes {
        guard !peerPublicKey.isEmpty, peerPublicKey.count <= primeLength else { throw .invalidKey }
        guard let prime = BN_get_rfc2409_prime_1024(nil), let context = BN_CTX_new(), let peer = BN_bin2bn(peerPublicKey, Int32(peerPublicKey.count), nil),
              let limit = BN_dup(prime), let shared = BN_secure_new()
        else { throw .allocationFailed }
        defer { BN_free(prime); BN_CTX_free(context); BN_free(peer); BN_free(limit); BN_clear_free(shared) }
        guard BN_sub_word(limit, 1) == 1, BN_cmp(peer, BN_value_one()) > 0, BN_cmp(peer, limit) < 0 else { throw .invalidKey }
        guard BN_mod_exp(shared, peer, secret, prime, context) == 1 else { throw .keyDerivationFailed }
        let padded = try SecureBytes(count: primeLength)
        let key = try SecureBytes(count: 16)
        let derived = padded.withUnsafeMutableBytes { sharedBytes in
            guard BN_bn2binpad(shared, sharedBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(primeLength)) == Int32(primeLength) else { return false }
            return key.withUnsafeMutableBytes { keyBytes in hkdfSHA256(sharedBytes, into: keyBytes) }
        }
        guard derived else { throw .keyDerivationFailed }
        return key
    }

    /// HKDF-SHA256 (RFC 5869) with no salt and no info, through OpenSSL's `EVP_PKEY` HKDF.
    private static func hkdfSHA256(_ input: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        var length = output.count
        return EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1
            && EVP_PKEY_CTX_set1_hkdf_key(context, input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1
            && EVP_PKEY_derive(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1 && length == output.count
    }

    private static func bytes(of number: OpaquePointer) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        BN_bn2bin(number, &bytes)
        return bytes
    }
}
