import CofferFormat
import CofferSupport
import CofferCrypto
/// `vault.seal` (SPEC.md §15.2): proof, under the record key, that a vault header was written by
/// someone holding the vault key. The header itself is only authenticated by the master
/// password, which a syncing device does not have for a header changed elsewhere; without the
/// seal, anyone who can push to the remote could plant a header wrapping another key and lock
/// every device out.
///
///     0  8  preamble "COFFER" 'H' 0x01
///     8 24  nonce
///    32 48  ciphertext of BLAKE2b-256(header file bytes), then the tag
///
/// `ad = "COFFER" ‖ 'H' ‖ 0x01 ‖ vault id`.
public enum HeaderSeal {
    public static let fileLength = SealedEnvelope.headerLength + 32 + SealedEnvelope.tagLength

    public static func seal(header: [UInt8], vaultID: VaultID, key: SecureBytes, nonce fixedNonce: [UInt8]? = nil) throws -> [UInt8] {
        let nonce = try fixedNonce ?? XChaCha20Poly1305.randomNonce()
        let ciphertext = try XChaCha20Poly1305.seal(
            try BLAKE2b.hash(header, length: 32), key: key, nonce: nonce,
            associatedData: SealedEnvelope.associatedData(.headerSeal, vaultID: vaultID))
        return SealedEnvelope(type: .headerSeal, nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Whether `seal` is this vault's seal of exactly `header`.
    public static func isValid(_ seal: [UInt8], for header: [UInt8], vaultID: VaultID, key: SecureBytes) -> Bool {
        guard let envelope = try? SealedEnvelope.decode(seal, as: .headerSeal, validLength: { $0 == fileLength }),
              let digest = try? XChaCha20Poly1305.openUnguarded(
                envelope.ciphertext[...], key: key, nonce: envelope.nonce[...],
                associatedData: SealedEnvelope.associatedData(.headerSeal, vaultID: vaultID)),
              let expected = try? BLAKE2b.hash(header, length: 32)
        else { return false }
        return digest == expected
    }
}
