import CofferCrypto
import CofferModel
import CofferSupport

/// `quick-unlock-<tag>` in a device's state (SPEC.md §8.6): the vault key wrapped under a key
/// that needs both the PIN and a device secret kept only in the kernel keyring. No I/O here.
///
///     0    8  preamble "COFFER" 'Q' 0x01
///     8    1  method (1: PIN, 2: the system's authentication, 3: the TPM, 4: the TPM and a PIN)
///     9    1  attempts left (0…3); 0: the wrapped key MUST NOT be tried, only destroyed
///     10   1  method 4: the PIN's length in bytes (an answer of another length is not sent to
///             the TPM, so a master password typed at the prompt costs no lockout strike); else 0
///     11   1  zero
///     12   8  created, unix seconds, u64 LE
///     20   8  expires, unix seconds, u64 LE; 0: when the device secret goes (a reboot)
///     28  32  BLAKE2b-256 of the vault header file it was made for
///     60  16  Argon2id salt
///     76   4  Argon2id opslimit, u32 LE
///     80   8  Argon2id memlimit, u64 LE
///     88  24  nonce
///     112 48  XChaCha20-Poly1305 of the vault key (32) and its tag
///     160  …  the TPM methods only: the sealed object, TPM2B_PRIVATE ‖ TPM2B_PUBLIC (§8.6.1)
///
/// The additional data is bytes 0–111 with byte 9 set to 0, then the vault id: every member but
/// the attempt counter is authenticated, so a counter can be lowered in place and nothing else
/// can be changed. The TPM methods also zero bytes 12–27 (created and expires: the master
/// password renews them without the TPM) and append the sealed object.
public struct QuickUnlockFile: Equatable, Sendable {
    public enum Method: UInt8, Sendable, CaseIterable {
        /// A PIN and the device secret: `wrapping = BLAKE2b(key: secret, Argon2id(PIN) ‖ vault id)`.
        case pin = 1
        /// The system's authentication (polkit) and the device secret: `wrapping =
        /// BLAKE2b(key: secret, vault id)`; no KDF (its costs are zero).
        case system = 2
        /// This machine's TPM unseals the secret: `wrapping = BLAKE2b(key: unsealed, vault id)`.
        case tpm = 3
        /// As `tpm`, with `BLAKE2b(key: salt, PIN ‖ vault id)` as the sealed object's authValue, so
        /// the TPM's dictionary-attack lockout counts wrong PINs.
        case tpmWithPIN = 4

        /// Whether the TPM holds the secret (it survives restarts), not the kernel keyring.
        public var usesTPM: Bool { self == .tpm || self == .tpmWithPIN }
        /// Whether a PIN is asked for.
        public var takesPIN: Bool { self == .pin || self == .tpmWithPIN }
    }

    public var method: Method
    public var attemptsLeft: UInt8
    /// Method 4: the PIN's length; 0 otherwise.
    public var pinLength: UInt8 = 0
    public var created: UInt64
    public var expires: UInt64
    public var headerDigest: [UInt8]
    public var salt: [UInt8]
    public var parameters: KDFParameters
    public var nonce: [UInt8]
    public var sealedKey: [UInt8]
    /// The TPM methods' sealed object (TPM2B_PRIVATE ‖ TPM2B_PUBLIC); empty for the others.
    public var sealedObject: [UInt8]

    /// The length of a file of the PIN and system methods, and the TPM methods' before the object.
    public static let length = 160
    /// The longest file a reader takes (a sealed object's two parts are each under 1 KiB).
    public static let maximumLength = length + 2 * (2 + 1024)
    /// How many wrong PINs a wrapped key survives (as Bitwarden's and a phone's first lockout).
    public static let attempts: UInt8 = 3
    /// Argon2id for a PIN: cheap (a PIN has few values; the device secret, not the cost, is what
    /// keeps a disk thief out), so an unlock takes tens of milliseconds.
    public static let pinParameters = KDFParameters(opsLimit: 2, memLimit: 32 << 20)

    public init(
        method: Method, attemptsLeft: UInt8, created: UInt64, expires: UInt64, headerDigest: [UInt8], salt: [UInt8],
        parameters: KDFParameters, nonce: [UInt8], sealedKey: [UInt8], sealedObject: [UInt8] = []
    ) {
        self.method = method
        self.attemptsLeft = attemptsLeft
        self.created = created
        self.expires = expires
        self.headerDigest = headerDigest
        self.salt = salt
        self.parameters = parameters
        self.nonce = nonce
        self.sealedKey = sealedKey
        self.sealedObject = sealedObject
    }

    /// Bytes 0–111 (everything before the sealed key).
    public var head: [UInt8] {
        var bytes = FileMagic.bytes(for: .quickUnlock) + [method.rawValue, attemptsLeft, pinLength, 0]
        bytes += LittleEndian.bytes(created) + LittleEndian.bytes(expires) + headerDigest + salt
        bytes += LittleEndian.bytes(parameters.opsLimit) + LittleEndian.bytes(parameters.memLimit) + nonce
        return bytes
    }

    public var encoded: [UInt8] { head + sealedKey + sealedObject }

    /// What the AEAD authenticates: the head with the attempt counter (and for the TPM methods
    /// the times) zeroed, the vault id, and the sealed object.
    public func associatedData(vaultID: VaultID) -> [UInt8] {
        var bytes = head
        bytes[9] = 0
        if method.usesTPM { bytes.replaceSubrange(12..<28, with: [UInt8](repeating: 0, count: 16)) }
        return bytes + vaultID.bytes + sealedObject
    }

    /// - Throws: `FormatError` for another length, file type or version, an unknown method, an
    ///   attempt count above `attempts`, non-zero reserved bytes or Argon2id costs outside
    ///   `KDFParameters`' algorithm.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> QuickUnlockFile {
        guard bytes.count >= length, bytes.count <= maximumLength else { throw .badLength }
        try FileMagic.check(bytes, is: .quickUnlock)
        guard let method = Method(rawValue: bytes[8]) else { throw .invalidDocument("unknown quick unlock method \(bytes[8])") }
        guard bytes[9] <= attempts, bytes[11] == 0 else { throw .invalidDocument("bad attempt count or reserved bytes") }
        guard method == .tpmWithPIN ? (4...64).contains(bytes[10]) : bytes[10] == 0 else { throw .invalidDocument("bad PIN length") }
        if method != .pin, bytes[76..<88].contains(where: { $0 != 0 }) { throw .invalidDocument("KDF costs for a method without one") }
        let sealedObject = Array(bytes[length...])
        if method.usesTPM {
            guard isSealedObject(sealedObject[...]) else { throw .invalidDocument("a TPM method without its sealed object") }
        } else if !sealedObject.isEmpty {
            throw .badLength
        }
        var file = QuickUnlockFile(
            method: method, attemptsLeft: bytes[9], created: LittleEndian.read(UInt64.self, from: bytes, at: 12),
            expires: LittleEndian.read(UInt64.self, from: bytes, at: 20), headerDigest: Array(bytes[28..<60]), salt: Array(bytes[60..<76]),
            parameters: KDFParameters(opsLimit: LittleEndian.read(UInt32.self, from: bytes, at: 76), memLimit: LittleEndian.read(UInt64.self, from: bytes, at: 80)),
            nonce: Array(bytes[88..<112]), sealedKey: Array(bytes[112..<160]), sealedObject: sealedObject)
        file.pinLength = bytes[10]
        return file
    }

    /// Whether `bytes` are exactly two TPM2Bs (a size, big-endian, and that many bytes), each
    /// 1 to 1024 bytes long.
    private static func isSealedObject(_ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        for _ in 0..<2 {
            guard rest.count >= 2 else { return false }
            let size = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
            guard (1...1024).contains(size), rest.count >= 2 + size else { return false }
            rest = rest.dropFirst(2 + size)
        }
        return rest.isEmpty
    }
}
