/// The unlocked vault key and the subkeys derived from it once per unlock (SPEC.md §5.1).
///
/// Held only in guarded memory; dropping the last reference wipes every key.
public final class VaultKeys: Sendable {
    /// `crypto_kdf` subkey ids under context `COFFERv1`.
    enum Purpose: UInt64 {
        case records = 1
        case index = 2
    }

    public static let length = 32

    /// The 32-byte random vault key: what the header wraps and the keyring holds.
    public let vaultKey: SecureBytes
    let recordKey: SecureBytes
    /// Seals the identity index; a device with the identity store enabled keeps a copy.
    let indexKey: SecureBytes

    /// Derives the subkeys of `vaultKey`.
    public init(vaultKey: SecureBytes) throws(CryptoError) {
        guard vaultKey.count == Self.length else { throw .invalidLength(expected: Self.length, actual: vaultKey.count) }
        self.vaultKey = vaultKey
        recordKey = try SubkeyDerivation.derive(Purpose.records.rawValue, from: vaultKey)
        indexKey = try SubkeyDerivation.derive(Purpose.index.rawValue, from: vaultKey)
    }
}
