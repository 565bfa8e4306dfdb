import CofferFormat
/// A person's identity for teams (SPEC.md §16.1): an Ed25519 key pair that signs membership
/// entries and an X25519 key pair that team keys are sealed to, both derived from the personal
/// vault key (subkeys 3 and 4). Every device of the vault has the same identity without a new
/// file to sync, and it exists only while the personal vault is unlocked.
public final class PersonalIdentity: Sendable {
    public let signing: Ed25519SigningKey
    public let receiving: SealedBoxKeyPair

    /// The identity of the unlocked personal vault whose keys are `keys`.
    public init(keys: VaultKeys) throws(CryptoError) {
        signing = try Ed25519SigningKey(seed: keys.subkey(.signingIdentity))
        receiving = try SealedBoxKeyPair(seed: keys.subkey(.receivingIdentity))
    }
}

extension Vault {
    /// This (personal) vault's identity for teams; needs it unlocked.
    public func personalIdentity() throws(VaultError) -> PersonalIdentity {
        let keys = try keys()
        do { return try PersonalIdentity(keys: keys) } catch { throw .crypto(error) }
    }
}
