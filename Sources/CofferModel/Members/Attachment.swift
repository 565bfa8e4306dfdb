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

    /// Media types by file extension, for the kinds of file people keep with an item.
    static let mediaTypesByExtension: [String: String] = [
        "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "svg": "image/svg+xml", "txt": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "json": "application/json", "xml": "application/xml", "html": "text/html", "zip": "application/zip",
        "gz": "application/gzip", "tar": "application/x-tar", "kdbx": "application/x-keepass2",
        "pem": "application/x-pem-file", "crt": "application/x-x509-ca-cert", "cer": "application/pkix-cert",
        "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12", "pub": "text/plain", "asc": "application/pgp-keys",
        "ovpn": "application/x-openvpn-profile", "conf": "text/plain", "yaml": "application/yaml", "yml": "application/yaml",
    ]

    /// The media type of the first of `names` (the attachment's name, then a file's) whose
    /// extension is known; `application/octet-stream` otherwise.
    public static func mediaType(guessedFrom names: String...) -> String {
        for name in names {
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { continue }
            if let type = mediaTypesByExtension[name[name.index(after: dot)...].lowercased()] { return type }
        }
        return defaultMediaType
    }

    /// `name` made into one an attachment may have: `/` and control characters become `_`,
    /// cut to 255 bytes; `nil` when nothing is left (an import names what it could not keep).
    public static func usableName(_ name: String) -> String? {
        var result = String(name.map { character in
            character == "/" || character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) ? "_" : character
        })
        while result.utf8.count > maximumNameBytes { result.removeLast() }
        return isValidName(result) ? result : nil
    }

    /// "12 KiB", "3.4 MiB", "512 bytes": a size as a person reads it.
    public static func describe(size bytes: UInt64) -> String {
        if bytes < 1024 { return "\(bytes) byte\(bytes == 1 ? "" : "s")" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1024, unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let rounded = value >= 10 ? String(Int(value.rounded())) : String(Double(Int(value * 10)) / 10)
        return rounded + " " + units[unit]
    }

    /// Whether `name` may name an attachment.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= maximumNameBytes && name != "." && name != ".."
            && !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") })
    }
}
