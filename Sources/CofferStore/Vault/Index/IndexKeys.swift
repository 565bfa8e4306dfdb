import CofferFormat
/// The identity index's keys (SPEC.md §5.1, §7.1): the index key is subkey 2 of the vault key,
/// so an unlocked vault can always derive it, and a device with the identity store enabled keeps
/// a copy of it (never the vault key) to suggest logins while locked.
final class IndexKeys: Sendable {
    /// Seals manifest, shards and journal (and a device's listing snapshot).
    let sealing: SecureBytes
    /// Keys the bucket hash, so bucket numbers reveal nothing about which sites are stored.
    let bucketing: SecureBytes

    init(indexKey: SecureBytes) throws(CryptoError) {
        sealing = indexKey
        bucketing = try SubkeyDerivation.derive(1, from: indexKey)
    }

    convenience init(vaultKeys: VaultKeys) throws(CryptoError) {
        try self.init(indexKey: vaultKeys.indexKey)
    }
}
