import CofferFormat
import FoundationEssentials

extension Tombstone {
    /// `"COFFER" 'T' 0x01 ‖ vault id ‖ record id` (40 bytes).
    static func associatedData(vaultID: VaultID, recordID: RecordID) -> [UInt8] {
        SealedEnvelope.associatedData(.tombstone, vaultID: vaultID) + recordID.bytes
    }

    /// - Parameter nonce: fixed only by the test-vector check; `nil` draws a fresh random nonce.
    public func sealed(vaultID: VaultID, key: SecureBytes, nonce fixedNonce: [UInt8]? = nil) throws -> [UInt8] {
        var plaintext: [UInt8] = []
        plaintext.append(littleEndian: revision)
        plaintext.append(littleEndian: UInt64(max(0, deleted.timeIntervalSince1970.rounded(.down))))
        let nonce = try fixedNonce ?? XChaCha20Poly1305.randomNonce()
        let ciphertext = try XChaCha20Poly1305.seal(
            plaintext, key: key, nonce: nonce, associatedData: Self.associatedData(vaultID: vaultID, recordID: recordID))
        return SealedEnvelope(type: .tombstone, nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Opens the tombstone file of record `id`.
    /// - Throws: `FormatError` or `CryptoError` for anything but an authentic tombstone of this
    ///   vault stored under its own id.
    public static func open(_ bytes: [UInt8], id: RecordID, vaultID: VaultID, key: SecureBytes) throws -> Tombstone {
        let envelope = try SealedEnvelope.decode(bytes, as: .tombstone) { $0 == fileLength }
        let plaintext = try XChaCha20Poly1305.openUnguarded(
            envelope.ciphertext[...], key: key, nonce: envelope.nonce[...],
            associatedData: associatedData(vaultID: vaultID, recordID: id))
        var reader = ByteReader(plaintext)
        let revision = try reader.integer(UInt64.self)
        let seconds = try reader.integer(UInt64.self)
        guard revision >= 1, seconds <= UInt64(Int64.max) else { throw FormatError.invalidDocument("tombstone out of range") }
        return Tombstone(recordID: id, revision: revision, deleted: Date(timeIntervalSince1970: Double(seconds)))
    }
}
