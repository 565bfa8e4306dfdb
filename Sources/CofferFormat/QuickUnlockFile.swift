import CofferCrypto
import CofferModel
import CofferSupport

/// `quick-unlock-<tag>` in a device's state (SPEC.md §8.6): the vault key wrapped under a key
/// that needs both the PIN and a device secret kept only in the kernel keyring. No I/O here.
///
///     0    8  preamble "COFFER" 'Q' 0x01
///     8    1  method (1: PIN, 2: the system's authentication)
///     9    1  attempts left (0…3); 0: the wrapped key MUST NOT be tried, only destroyed
///     10   2  zero
///     12   8  created, unix seconds, u64 LE
///     20   8  expires, unix seconds, u64 LE; 0: when the device secret goes (a reboot)
///     28  32  BLAKE2b-256 of the vault header file it was made for
///     60  16  Argon2id salt
///     76   4  Argon2id opslimit, u32 LE
///     80   8  Argon2id memlimit, u64 LE
///     88  24  nonce
///     112 48  XChaCha20-Poly1305 of the vault key (32) and its tag
///
/// The additional data is bytes 0–111 with byte 9 set to 0, then the vault id: every member but
/// the attempt counter is authenticated, so a counter can be lowered in place and nothing else
/// can be changed.
public struct QuickUnlockFile: Equatable, Sendable {
    public enum Method: UInt8, Sendable, CaseIterable {
        /// A PIN and the device secret: `wrapping = BLAKE2b(key: secret, Argon2id(PIN) ‖ vault id)`.
        case pin = 1
        /// The system's authentication (polkit) and the device secret: `wrapping =
        /// BLAKE2b(key: secret, vault id)`; no KDF (its costs are zero).
        case system = 2
    }

    public var method: Method
    public var attemptsLeft: UInt8
    public var created: UInt64
    public var expires: UInt64
    public var headerDigest: [UInt8]
    public var salt: [UInt8]
    public var parameters: KDFParameters
    public var nonce: [UInt8]
    public var sealedKey: [UInt8]

    public static let length = 160
    /// How many wrong PINs a wrapped key survives (as Bitwarden's and a phone's first lockout).
    public static let attempts: UInt8 = 3
    /// Argon2id for a PIN: cheap (a PIN has few values; the device secret, not the cost, is what
    /// keeps a disk thief out), so an unlock takes tens of milliseconds.
    public static let pinParameters = KDFParameters(opsLimit: 2, memLimit: 32 << 20)

    public init(
        method: Method, attemptsLeft: UInt8, created: UInt64, expires: UInt64, headerDigest: [UInt8], salt: [UInt8],
        parameters: KDFParameters, nonce: [UInt8], sealedKey: [UInt8]
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
    }

    /// Bytes 0–111 (everything before the sealed key).
    public var head: [UInt8] {
        var bytes = FileMagic.bytes(for: .quickUnlock) + [method.rawValue, attemptsLeft, 0, 0]
        bytes += LittleEndian.bytes(created) + LittleEndian.bytes(expires) + headerDigest + salt
        bytes += LittleEndian.bytes(parameters.opsLimit) + LittleEndian.bytes(parameters.memLimit) + nonce
        return bytes
    }

    public var encoded: [UInt8] { head + sealedKey }

    /// What the AEAD authenticates: the head with the attempt counter zeroed, and the vault id.
    public func associatedData(vaultID: VaultID) -> [UInt8] {
        var bytes = head
        bytes[9] = 0
        return bytes + vaultID.bytes
    }

    /// - Throws: `FormatError` for another length, file type or version, an unknown method, an
    ///   attempt count above `attempts`, non-zero reserved bytes or Argon2id costs outside
    ///   `KDFParameters`' algorithm.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> QuickUnlockFile {
        guard bytes.count == length else { throw .badLength }
        try FileMagic.check(bytes, is: .quickUnlock)
        guard let method = Method(rawValue: bytes[8]) else { throw .invalidDocument("unknown quick unlock method \(bytes[8])") }
        guard bytes[9] <= attempts, bytes[10] == 0, bytes[11] == 0 else { throw .invalidDocument("bad attempt count or reserved bytes") }
        if method == .system, bytes[76..<88].contains(where: { $0 != 0 }) { throw .invalidDocument("KDF costs for a method without one") }
        return QuickUnlockFile(
            method: method, attemptsLeft: bytes[9], created: LittleEndian.read(UInt64.self, from: bytes, at: 12),
            expires: LittleEndian.read(UInt64.self, from: bytes, at: 20), headerDigest: Array(bytes[28..<60]), salt: Array(bytes[60..<76]),
            parameters: KDFParameters(opsLimit: LittleEndian.read(UInt32.self, from: bytes, at: 76), memLimit: LittleEndian.read(UInt64.self, from: bytes, at: 80)),
            nonce: Array(bytes[88..<112]), sealedKey: Array(bytes[112..<160]))
    }
}
