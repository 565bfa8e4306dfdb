import CofferModel
import CofferSupport
import FoundationEssentials

/// The remembered deletion of a record (`tombstones/<xx>/<record id>`, SPEC.md §15.2): which
/// revision was deleted and when. Sync needs it so that an older copy of a deleted record, on
/// another device or put back by a remote, never brings it back; an edit made after that
/// revision still wins over the deletion.
///
///     0  8  preamble "COFFER" 'T' 0x01
///     8 24  nonce
///    32 32  ciphertext of revision u64 LE ‖ deleted (Unix seconds) u64 LE, then the tag
///
/// Sealed with the record key and bound to the vault id and record id like a record (§6.1), so a
/// tombstone cannot be forged, moved to another record or brought in from another vault. Its
/// plaintext has a fixed size, so it needs no padding: every tombstone is 64 bytes. (The sealing
/// is the store's: `Tombstone+Sealing.swift`.)
public struct Tombstone: Equatable, Sendable {
    public static let fileLength = SealedEnvelope.headerLength + 16 + SealedEnvelope.tagLength

    public var recordID: RecordID
    /// The revision of the record this deletion removed (a later revision beats it).
    public var revision: UInt64
    /// When it was deleted (whole seconds).
    public var deleted: Date

    public init(recordID: RecordID, revision: UInt64, deleted: Date) {
        self.recordID = recordID
        self.revision = revision
        self.deleted = deleted
    }
}
