import CofferModel
import CofferSupport
import CofferCrypto
/// The vault header file (`vault.coffer`): vault id, KDF parameters and the wrapped vault key.
///
/// Layout (SPEC.md §4.1), 144 bytes:
///
///     0   8  preamble "COFFER" 'V' 0x01
///     8  16  vault id
///    24   1  KDF algorithm (2 = Argon2id v1.3)
///    25   3  reserved, zero
///    28   4  opslimit, u32 LE
///    32   8  memlimit in bytes, u64 LE
///    40  16  salt
///    56  24  nonce
///    80  48  vault key sealed with XChaCha20-Poly1305 (32 + 16-byte tag)
///   128  16  checksum: BLAKE2b-128 of bytes 0..<128
///
/// The associated data of the wrapped key is bytes 0..<56, so every parameter is authenticated.
/// The unkeyed checksum only tells accidental corruption apart from a wrong password; the AEAD
/// tag is what stops an attacker.
public struct VaultHeader: Equatable, Sendable {
    public static let length = 144
    static let checksumLength = 16
    static let associatedDataLength = 56
    public static let wrappedKeyLength = 48

    public var vaultID: VaultID
    public var kdf: KDFParameters
    public var salt: [UInt8]
    public var nonce: [UInt8]
    public var wrappedKey: [UInt8]

    public init(vaultID: VaultID, kdf: KDFParameters, salt: [UInt8], nonce: [UInt8], wrappedKey: [UInt8]) {
        self.vaultID = vaultID
        self.kdf = kdf
        self.salt = salt
        self.nonce = nonce
        self.wrappedKey = wrappedKey
    }

    /// The bytes the wrapped key's tag authenticates: everything before the nonce.
    public var associatedData: [UInt8] {
        FileMagic.bytes(for: .vaultHeader) + vaultID.bytes + [kdf.algorithm, 0, 0, 0]
            + LittleEndian.bytes(kdf.opsLimit) + LittleEndian.bytes(kdf.memLimit) + salt
    }

    public func encoded() throws(CryptoError) -> [UInt8] {
        let body = associatedData + nonce + wrappedKey
        return body + (try BLAKE2b.hash(body, length: Self.checksumLength))
    }

    /// Parses a header and checks its KDF costs against `policy` before anything is derived.
    /// - Throws: `FormatError` for any byte that is not canonical v1, or costs out of range.
    public static func decode(_ bytes: [UInt8], policy: KDFPolicy) throws(FormatError) -> VaultHeader {
        try FileMagic.check(bytes, is: .vaultHeader)
        guard bytes.count == length else { throw .badLength }
        let checksum = (try? BLAKE2b.hash(bytes[0..<128], length: checksumLength)) ?? []
        guard checksum[...] == bytes[128...] else { throw .nonCanonical("checksum mismatch") }
        guard bytes[25] == 0, bytes[26] == 0, bytes[27] == 0 else { throw .nonCanonical("reserved bytes") }
        let kdf = KDFParameters(
            algorithm: bytes[24],
            opsLimit: LittleEndian.read(UInt32.self, from: bytes, at: 28),
            memLimit: LittleEndian.read(UInt64.self, from: bytes, at: 32))
        guard policy.permits(kdf) else { throw .kdfParametersOutOfRange }
        return VaultHeader(
            vaultID: try VaultID(bytes: bytes[8..<24]), kdf: kdf,
            salt: Array(bytes[40..<56]), nonce: Array(bytes[56..<80]), wrappedKey: Array(bytes[80..<128]))
    }
}
