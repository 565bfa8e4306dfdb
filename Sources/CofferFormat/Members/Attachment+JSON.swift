import CofferSupport
import CofferCrypto
import CofferModel
import FoundationEssentials

/// One element of a record's `attachments` (SPEC.md §6.7).
extension Attachment {
    package func json(omittingDefaults: Bool) -> JSONValue {
        var members: JSONObject = [
            "id": .string(id.hex), "name": .string(name), "size": .integer(size), "digest": .string(Hex.encode(digest)),
            "key": .string(Base64.encodeURL(key)), "added": .string(UTCTimestamp.format(added)),
        ]
        if mediaType != Self.defaultMediaType || !omittingDefaults { members["mediaType"] = .string(mediaType) }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type, a missing required member, a name that may
    /// not name a file, a size past 2^53 or a digest or key of the wrong length.
    init?(json: JSONValue) {
        guard let members = json.objectValue,
              let id = members["id"]?.stringValue.flatMap({ try? AttachmentID(hex: $0) }),
              let name = members["name"]?.stringValue, Self.isValidName(name),
              let size = members["size"]?.uint64Value, size <= Self.maximumSize,
              let digest = members["digest"]?.stringValue.flatMap(Hex.decode), digest.count == 32,
              Hex.encode(digest) == members["digest"]?.stringValue,
              let key = members["key"]?.stringValue.flatMap(Base64.decodeURL), key.count == SecretStream.keyLength,
              let added = members["added"]?.stringValue.flatMap(UTCTimestamp.parse)
        else { return nil }
        let mediaType = members["mediaType"]
        guard mediaType == nil || mediaType?.stringValue.map(Self.isValidMediaType) == true else { return nil }
        self.init(id: id, name: name, mediaType: mediaType?.stringValue ?? Self.defaultMediaType, size: size, digest: digest, key: key, added: added)
    }

    /// The largest size a record may state: 2^53, where JSON's numbers stop being exact
    /// everywhere (a limit per file is a setting, far below it).
    public static let maximumSize: UInt64 = 1 << 53

    /// `type/subtype` with optional parameters: printable ASCII, at most 255 bytes.
    public static func isValidMediaType(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 255, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F || $0 == 0x20 }),
              let slash = bytes.firstIndex(of: UInt8(ascii: "/")), slash > 0, slash < bytes.count - 1
        else { return false }
        return true
    }
}
