import CofferFormat
/// Seals and opens record files: padding, AEAD with the record associated data, canonical JSON
/// (SPEC.md §6). No file I/O here.
public enum RecordSealing {
    /// - Parameter nonce: fixed only by the test-vector check; `nil` draws a fresh random nonce.
    public static func seal(_ record: Record, vaultID: VaultID, key: SecureBytes, nonce fixedNonce: [UInt8]? = nil) throws -> [UInt8] {
        try RecordCoding.validate(record)
        var json = try RecordCoding.encode(record)
        defer { json.withUnsafeMutableBytes { Sodium.wipe($0) } }
        guard json.count < RecordEnvelope.maximumPlaintextLength else {
            throw VaultError.invalidInput("credential too large: \(json.count) bytes (at most 1 MiB)")
        }
        var padded = try Padding.pad(json, blockSize: Padding.recordBlockSize)
        defer { padded.withUnsafeMutableBytes { Sodium.wipe($0) } }
        let nonce = try fixedNonce ?? XChaCha20Poly1305.randomNonce()
        let ciphertext = try XChaCha20Poly1305.seal(
            padded, key: key, nonce: nonce,
            associatedData: RecordEnvelope.associatedData(vaultID: vaultID, recordID: record.id))
        return RecordEnvelope(nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Opens the file bytes of record `id`.
    ///
    /// The plaintext is decrypted into ordinary memory and wiped once decoded, not into a guarded
    /// allocation: the decoded `Record` holds the password in Swift strings anyway (SPEC.md §9),
    /// core dumps are off (`ProcessHardening`), and a guarded page costs ten system calls that
    /// contend for the address-space lock: 100,000 of them made `verify` spend most of its time in
    /// the kernel.
    /// - Throws: `FormatError` or `CryptoError` for anything but an authentic record of this vault
    ///   stored under its own id.
    public static func open(_ bytes: [UInt8], id: RecordID, vaultID: VaultID, key: SecureBytes) throws -> Record {
        let envelope = try RecordEnvelope.decode(bytes)
        var padded = try XChaCha20Poly1305.openUnguarded(
            envelope.ciphertext[...], key: key, nonce: envelope.nonce[...],
            associatedData: RecordEnvelope.associatedData(vaultID: vaultID, recordID: id))
        defer { padded.withUnsafeMutableBytes { Sodium.wipe($0) } }
        let record = try padded.withUnsafeBytes { (plaintext) throws -> Record in
            let length = try Padding.unpaddedLength(of: plaintext, blockSize: Padding.recordBlockSize)
            return try RecordCoding.decode(UnsafeRawBufferPointer(rebasing: plaintext[0..<length]))
        }
        guard record.id == id else { throw FormatError.invalidDocument("id does not match the file name") }
        return record
    }
}
