import CofferModel
import CofferSupport
import CofferCrypto
/// A sealed record file (`records/<xx>/<record id>`), SPEC.md §6.1:
///
///     0  8  preamble "COFFER" 'R' 0x01
///     8 24  nonce
///    32  n  ciphertext of the padded JSON document, then the 16-byte tag
///
/// Nothing else is in clear: not the revision, not a timestamp. The vault id and record id are
/// bound through the associated data, so a file swapped with another record or copied in from
/// another vault fails authentication.
public struct RecordEnvelope: Equatable, Sendable {
    static let headerLength = 32
    /// Largest accepted padded plaintext: 1 MiB. Readers refuse bigger files without reading them.
    public static let maximumPlaintextLength = 1 << 20
    public static let maximumFileLength = headerLength + maximumPlaintextLength + 16
    public static let minimumFileLength = headerLength + Padding.recordBlockSize + 16

    public var nonce: [UInt8]
    public var ciphertext: [UInt8]

    public init(nonce: [UInt8], ciphertext: [UInt8]) {
        self.nonce = nonce
        self.ciphertext = ciphertext
    }

    /// `"COFFER" 'R' 0x01 ‖ vault id ‖ record id` (40 bytes).
    public static func associatedData(vaultID: VaultID, recordID: RecordID) -> [UInt8] {
        SealedEnvelope.associatedData(.record, vaultID: vaultID) + recordID.bytes
    }

    public func encoded() -> [UInt8] {
        SealedEnvelope(type: .record, nonce: nonce, ciphertext: ciphertext).encoded()
    }

    /// Parses the envelope; the ciphertext length must be a whole number of padding blocks plus a tag.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> RecordEnvelope {
        let envelope = try SealedEnvelope.decode(bytes, as: .record) { count in
            count >= minimumFileLength && count <= maximumFileLength
                && (count - headerLength - 16) % Padding.recordBlockSize == 0
        }
        return RecordEnvelope(nonce: envelope.nonce, ciphertext: envelope.ciphertext)
    }
}
