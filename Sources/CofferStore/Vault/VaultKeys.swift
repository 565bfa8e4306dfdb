import CofferFormat
/// The unlocked vault key and the subkeys derived from it once per unlock (SPEC.md §5.1).
///
/// Held only in guarded memory; dropping the last reference wipes every key.
public final class VaultKeys: Sendable {
    /// `crypto_kdf` subkey ids under context `COFFERv1`.
    package enum Purpose: UInt64 {
        case records = 1
        case index = 2
        /// A personal vault's signing identity: the Ed25519 seed (SPEC.md §16.1).
        case signingIdentity = 3
        /// A personal vault's receiving identity: the X25519 seed.
        case receivingIdentity = 4
        /// A team vault: seals the membership chain and earlier keys in `team.coffer` (§16.3).
        case membershipKey = 5
        /// A team vault: the key id the membership chain names (§16.2).
        case keyIdentifier = 6
    }

    public static let length = 32

    /// The 32-byte random vault key: what the header wraps and the keyring holds.
    public let vaultKey: SecureBytes
    package let recordKey: SecureBytes
    /// Seals the identity index; a device with the identity store enabled keeps a copy.
    package let indexKey: SecureBytes
    /// A team vault's earlier keys, newest first (SPEC.md §16.4): files sealed before a member
    /// was removed still open — in a merge's base, in git's history — but nothing is sealed
    /// under them again. Empty for a personal vault, and for a team unlocked only to fill.
    package let previous: [VaultKeys]

    /// Derives the subkeys of `vaultKey`.
    public init(vaultKey: SecureBytes, previous: [VaultKeys] = []) throws(CryptoError) {
        guard vaultKey.count == Self.length else { throw .invalidLength(expected: Self.length, actual: vaultKey.count) }
        self.vaultKey = vaultKey
        recordKey = try SubkeyDerivation.derive(Purpose.records.rawValue, from: vaultKey)
        indexKey = try SubkeyDerivation.derive(Purpose.index.rawValue, from: vaultKey)
        self.previous = previous
    }

    /// The subkey for `purpose`, derived now (the purposes a fill never needs).
    package func subkey(_ purpose: Purpose) throws(CryptoError) -> SecureBytes {
        try SubkeyDerivation.derive(purpose.rawValue, from: vaultKey)
    }

    /// Opens a file sealed under the record key: the current one, else an earlier team key's.
    /// - Throws: the current key's error when no key opens it.
    package func openingWithRecordKey<Result>(_ body: (SecureBytes) throws -> Result) throws -> Result {
        do {
            return try body(recordKey)
        } catch {
            for keys in previous {
                if let result = try? body(keys.recordKey) { return result }
            }
            throw error
        }
    }
}
