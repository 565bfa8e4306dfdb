import CSodium

/// An X25519 key pair for receiving sealed boxes (`crypto_box_seal`): how a team's vault key
/// reaches each member (SPEC.md §16.3). A sealed box is anonymous — anyone with the public key
/// can make one — so what it carries is checked against the signed membership chain, never
/// trusted for itself.
public final class SealedBoxKeyPair: Sendable {
    public static let publicKeyLength = Int(crypto_box_PUBLICKEYBYTES)
    public static let seedLength = Int(crypto_box_SEEDBYTES)
    /// What `seal` adds to the message: an ephemeral public key and a tag.
    public static let overhead = Int(crypto_box_sealbytes())

    public let publicKey: [UInt8]
    private let secretKey: SecureBytes

    /// The key pair of a 32-byte seed (`crypto_box_seed_keypair`).
    public init(seed: SecureBytes) throws(CryptoError) {
        try Sodium.ready()
        guard seed.count == Self.seedLength else { throw .invalidLength(expected: Self.seedLength, actual: seed.count) }
        let secret = try SecureBytes(count: Int(crypto_box_SECRETKEYBYTES))
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyLength)
        let status = secret.withUnsafeMutableBytes { output in
            seed.withUnsafeBytes {
                crypto_box_seed_keypair(&publicKey, output.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        self.publicKey = publicKey
        secretKey = secret
    }

    /// Seals `message` to `publicKey` (`crypto_box_seal`).
    public static func seal(_ message: SecureBytes, to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        guard publicKey.count == publicKeyLength else { throw .invalidLength(expected: publicKeyLength, actual: publicKey.count) }
        var sealed = [UInt8](repeating: 0, count: message.count + overhead)
        let status = message.withUnsafeBytes { plain in
            crypto_box_seal(&sealed, plain.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(plain.count), publicKey)
        }
        guard status == 0 else { throw .invalidKey }
        return sealed
    }

    /// Opens a box sealed to this key pair (`crypto_box_seal_open`), into guarded memory.
    public func open(_ sealed: [UInt8]) throws(CryptoError) -> SecureBytes {
        guard sealed.count > Self.overhead else { throw .authenticationFailed }
        let message = try SecureBytes(count: sealed.count - Self.overhead)
        let status = message.withUnsafeMutableBytes { output in
            secretKey.withUnsafeBytes { secret in
                crypto_box_seal_open(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count), publicKey,
                    secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .authenticationFailed }
        return message
    }
}
