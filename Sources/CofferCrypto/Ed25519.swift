import CSodium

/// An Ed25519 signing key (RFC 8032) through libsodium's `crypto_sign_*`: the keys the SSH agent
/// serves. The secret half — libsodium's 64-byte form, seed ‖ public key, which is also what an
/// OpenSSH private key file stores — lives only in `SecureBytes`.
public final class Ed25519SigningKey: Sendable {
    public static let publicKeyLength = 32
    public static let secretKeyLength = 64
    public static let signatureLength = 64

    public let publicKey: [UInt8]
    private let secretKey: SecureBytes

    /// A fresh key from libsodium's CSPRNG.
    public static func generate() throws(CryptoError) -> Ed25519SigningKey {
        try Sodium.ready()
        let secret = try SecureBytes(count: secretKeyLength)
        var publicKey = [UInt8](repeating: 0, count: publicKeyLength)
        let status = secret.withUnsafeMutableBytes { crypto_sign_keypair(&publicKey, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard status == 0 else { throw .keyDerivationFailed }
        return Ed25519SigningKey(publicKey: publicKey, secretKey: secret)
    }

    /// The key whose 64-byte secret form is `secretKey` (seed ‖ public key, as OpenSSH stores
    /// it). The public half is recomputed from the seed and must equal both the stored half and
    /// `publicKey`: a file whose halves disagree is corrupt, and signing with it would produce
    /// signatures nobody can verify.
    public init(secretKey: SecureBytes, publicKey: [UInt8]) throws(CryptoError) {
        try Sodium.ready()
        guard secretKey.count == Self.secretKeyLength else { throw .invalidLength(expected: Self.secretKeyLength, actual: secretKey.count) }
        guard publicKey.count == Self.publicKeyLength else { throw .invalidLength(expected: Self.publicKeyLength, actual: publicKey.count) }
        var derived = [UInt8](repeating: 0, count: Self.publicKeyLength)
        let consistent = secretKey.withUnsafeBytes { secret -> Bool in
            let bytes = secret.bindMemory(to: UInt8.self)
            guard crypto_sign_ed25519_sk_to_pk(&derived, bytes.baseAddress!) == 0 else { return false }
            let stored = UnsafeRawBufferPointer(rebasing: secret[32..<64])
            return derived.withUnsafeBytes { Sodium.constantTimeEqual($0, stored) }
                && derived.withUnsafeBytes { mine in publicKey.withUnsafeBytes { Sodium.constantTimeEqual(mine, $0) } }
        }
        guard consistent else { throw .authenticationFailed }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The key of a 32-byte RFC 8032 seed (`crypto_sign_seed_keypair`): the private key form of
    /// PKCS#8 (RFC 8410) and so of an EdDSA passkey.
    public convenience init(seed: SecureBytes) throws(CryptoError) {
        try Sodium.ready()
        guard seed.count == 32 else { throw .invalidLength(expected: 32, actual: seed.count) }
        let secret = try SecureBytes(count: Self.secretKeyLength)
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyLength)
        let status = secret.withUnsafeMutableBytes { output in
            seed.withUnsafeBytes {
                crypto_sign_seed_keypair(&publicKey, output.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        self.init(publicKey: publicKey, secretKey: secret)
    }

    private init(publicKey: [UInt8], secretKey: SecureBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A detached signature of `message` (`crypto_sign_detached`).
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureLength)
        let status = secretKey.withUnsafeBytes { secret in
            crypto_sign_detached(&signature, nil, message, UInt64(message.count), secret.bindMemory(to: UInt8.self).baseAddress!)
        }
        guard status == 0 else { throw .authenticationFailed }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    public static func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard (try? Sodium.ready()) != nil, signature.count == signatureLength, publicKey.count == publicKeyLength else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// Lends the 64-byte secret form, to write it into a key file (which goes into a sealed record).
    public func withSecretKey<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try secretKey.withUnsafeBytes { try body($0) }
    }
}

/// SHA-256 (`crypto_hash_sha256`): OpenSSH key fingerprints.
public enum SHA256Digest {
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        _ = try? Sodium.ready()
        var digest = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }
}
