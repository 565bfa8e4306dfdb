/// The COSE algorithms Coffer's passkeys sign with (RFC 9053, IANA "COSE Algorithms").
public enum PasskeyAlgorithm: Int, CaseIterable, Sendable {
    /// ECDSA P-256 with SHA-256: what nearly every relying party asks for.
    case es256 = -7
    /// Ed25519 (RFC 8032), through libsodium.
    case edDSA = -8

    public var name: String { self == .es256 ? "ES256" : "EdDSA" }
}
