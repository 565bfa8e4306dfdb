import CofferStore
import CofferFormat

/// A passkey's private key, ready to sign: made from the PKCS#8 DER its record stores (SPEC.md
/// §6.4) for one operation and dropped after it. The algorithm is the key's: an EC P-256
/// `PrivateKeyInfo` is ES256, an RFC 8410 Ed25519 one is EdDSA.
public enum PasskeyPrivateKey {
    case es256(P256SigningKey)
    case edDSA(Ed25519SigningKey)

    /// DER prefix of an RFC 8410 Ed25519 `PrivateKeyInfo` (version 0, OID 1.3.101.112, the
    /// 32-byte seed as an OCTET STRING inside the OCTET STRING): the whole key is this and the seed.
    static let ed25519PKCS8Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

    /// A fresh key for `algorithm`.
    public static func generate(_ algorithm: PasskeyAlgorithm) throws(CryptoError) -> PasskeyPrivateKey {
        switch algorithm {
        case .es256: .es256(try P256SigningKey.generate())
        case .edDSA: .edDSA(try Ed25519SigningKey(seed: try SecureBytes.random(count: 32)))
        }
    }

    /// The key a PKCS#8 DER holds. Throws `.invalidKey` for anything but a valid P-256 or Ed25519 key.
    public init(pkcs8 der: [UInt8]) throws(CryptoError) {
        if der.count == Self.ed25519PKCS8Prefix.count + 32, der.starts(with: Self.ed25519PKCS8Prefix) {
            self = .edDSA(try Ed25519SigningKey(seed: try SecureBytes(copying: der.suffix(32))))
        } else {
            self = .es256(try P256SigningKey(pkcs8: der))
        }
    }

    public var algorithm: PasskeyAlgorithm {
        switch self {
        case .es256: .es256
        case .edDSA: .edDSA
        }
    }

    /// The key as PKCS#8 DER, what a record stores.
    public func pkcs8() throws(CryptoError) -> [UInt8] {
        switch self {
        case .es256(let key): return try key.pkcs8()
        case .edDSA(let key): return key.withSecretKey { Self.ed25519PKCS8Prefix + $0.prefix(32) }
        }
    }

    /// The public key as a COSE_Key (RFC 9052 §7, RFC 9053 §7.1/§7.2): EC2 with crv 1 (P-256) and
    /// both coordinates, or OKP with crv 6 (Ed25519).
    public var cosePublicKey: CBOR {
        switch self {
        case .es256(let key):
            .map([(.integer(1), .integer(2)), (.integer(3), .integer(-7)), (.integer(-1), .integer(1)),
                  (.integer(-2), .bytes(key.x)), (.integer(-3), .bytes(key.y))])
        case .edDSA(let key):
            .map([(.integer(1), .integer(1)), (.integer(3), .integer(-8)), (.integer(-1), .integer(6)), (.integer(-2), .bytes(key.publicKey))])
        }
    }

    /// The public key as a DER `SubjectPublicKeyInfo` (RFC 5480, RFC 8410): what a browser's
    /// `AuthenticatorAttestationResponse.getPublicKey()` returns. Both forms are a fixed prefix
    /// and the key.
    public var subjectPublicKeyInfo: [UInt8] {
        switch self {
        case .es256(let key):
            Hex.decode("3059301306072a8648ce3d020106082a8648ce3d030107034200")! + [0x04] + key.x + key.y
        case .edDSA(let key):
            Hex.decode("302a300506032b6570032100")! + key.publicKey
        }
    }

    /// A signature of `message` as WebAuthn carries it: DER for ES256, 64 raw bytes for EdDSA.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        switch self {
        case .es256(let key): try key.sign(message)
        case .edDSA(let key): try key.sign(message)
        }
    }
}
