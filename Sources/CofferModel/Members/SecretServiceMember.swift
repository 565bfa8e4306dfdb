import CofferSupport
import FoundationEssentials

/// What makes an item of kind `secret` a Secret Service item (SPEC.md §6.5): the collection it
/// belongs to, the attributes applications look it up by, the content type, and which program
/// stored it. The secret itself is the record's `password` (base64 when it is not UTF-8); the
/// item's label is the record's `name`.
public struct SecretServiceMember: Equatable, Sendable {
    /// The collection's name, the last element of its object path (`login`, `work`).
    public var collection: String
    /// The lookup attributes (`service` → `github.com`, `xdg:schema` → …): a map, one value per name.
    public var attributes: [String: String]
    /// The secret's MIME type as the client gave it (`text/plain` when it gave none).
    public var contentType: String
    /// Whether `password` holds the secret's bytes in base64 (they were not UTF-8).
    public var isBase64: Bool
    /// The executable that stored the item (`/proc/PID/exe` of the D-Bus peer); empty when
    /// unknown (an import). A program reads its own items without being asked (SPEC.md §17.4).
    public var creator: String

    public static let defaultCollection = "login"
    public static let defaultContentType = "text/plain"
    /// Bounds on what a client may store (SPEC.md §6.5): libsecret's schemas have at most 32
    /// attributes; 10 MB attributes or 100,000 of them are refused, not stored.
    public static let maximumAttributes = 64
    public static let maximumAttributeNameBytes = 256
    public static let maximumAttributeValueBytes = 4096
    public static let maximumSecretBytes = 256 * 1024

    public init(
        collection: String = defaultCollection, attributes: [String: String] = [:], contentType: String = defaultContentType,
        isBase64: Bool = false, creator: String = ""
    ) {
        self.collection = collection
        self.attributes = attributes
        self.contentType = contentType
        self.isBase64 = isBase64
        self.creator = creator
    }

    /// A collection name: 1–64 of `a-z 0-9 _` (it is an object path element and a file-safe word).
    public static func isValidCollectionName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    /// Whether the attributes are within the bounds above (names non-empty, no NUL).
    public static func areValidAttributes(_ attributes: [String: String]) -> Bool {
        attributes.count <= maximumAttributes && attributes.allSatisfy { name, value in
            !name.isEmpty && name.utf8.count <= maximumAttributeNameBytes && value.utf8.count <= maximumAttributeValueBytes
                && !name.utf8.contains(0) && !value.utf8.contains(0)
        }
    }
}
