import FoundationEssentials

/// Identifies one attachment and names its file (`attachments/<xx>/<id>`, SPEC.md §6.7).
public struct AttachmentID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}

/// A file an item carries (SPEC.md §6.7): its bytes live sealed in a file of their own, under a
/// key of their own that only this member holds — so a team's rotation re-seals the record and
/// never the file, and a copy of the file without the record opens nothing.
///
/// - Warning: `key` opens the file: keep it as short-lived as the record, never log it.
public struct Attachment: Equatable, Sendable {
    public var id: AttachmentID
    /// What a person calls it, unique within its item (`recovery-codes.pdf`).
    public var name: String
    /// Its media type as given or guessed (`application/pdf`); `application/octet-stream` by default.
    public var mediaType: String
    /// Its length in bytes (the file is padded: this is what says how much of it is content).
    public var size: UInt64
    /// BLAKE2b-256 of its bytes.
    public var digest: [UInt8]
    /// The secretstream key its file is sealed under.
    public var key: [UInt8]
    public var added: Date

    public static let defaultMediaType = "application/octet-stream"
    /// A name is 1 to 255 bytes of UTF-8 (a file name's bound on Linux) without `/`, NUL or a
    /// control character: it becomes a file name when saved.
    public static let maximumNameBytes = 255
    /// At most this many per item.
    public static let maximumPerItem = 100

    public init(id: AttachmentID, name: String, mediaType: String, size: UInt64, digest: [UInt8], key: [UInt8], added: Date) {
        self.id = id
        self.name = name
        self.mediaType = mediaType
        self.size = size
        self.digest = digest
        self.key = key
        self.added = added
    }

    /// Whether `name` may name an attachment.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= maximumNameBytes && name != "." && name != ".."
            && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") })
    }
}
