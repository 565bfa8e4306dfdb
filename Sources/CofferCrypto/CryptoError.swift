/// Failures of the crypto layer. Each C return code becomes one of these at its call site.
public enum CryptoError: Error, Equatable, Sendable {
    /// `sodium_init` failed: the process cannot do cryptography at all.
    case initializationFailed
    /// `sodium_malloc` could not allocate guarded memory.
    case allocationFailed
    /// AEAD decryption failed: wrong key, or the ciphertext, nonce or associated data changed.
    case authenticationFailed
    /// Argon2id could not run with these parameters (usually: not enough memory).
    case keyDerivationFailed
    /// A key, nonce or length argument had the wrong size.
    case invalidLength(expected: Int, actual: Int)
    /// Padding was malformed after a successful decryption (a writer bug, never an attacker's).
    case invalidPadding
    /// A private key that is not what it claims: not the encoding or curve expected, a scalar out
    /// of range, a public point off the curve or not its own.
    case invalidKey
}
