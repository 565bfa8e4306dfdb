import CofferSupport
import CofferCrypto
import CofferModel
import FoundationEssentials

/// The `secretService` member of a record document (SPEC.md §6.5), and the secret's bytes as the
/// record's `password` carries them (UTF-8 text, else base64).
extension SecretServiceMember {
    /// The secret's bytes from the record's `password`.
    public func secretBytes(password: String) -> [UInt8]? {
        isBase64 ? Base64.decode(password) : Array(password.utf8)
    }

    /// The record's `password` for `bytes`: the text when it is UTF-8, else base64 (and
    /// `isBase64` set).
    public mutating func password(for bytes: [UInt8]) -> String {
        if let text = String(strictUTF8: bytes[...]) {
            isBase64 = false
            return text
        }
        isBase64 = true
        return Base64.encode(bytes)
    }

    package func json(omittingDefaults: Bool) -> JSONValue {
        var members: JSONObject = [
            "collection": .string(collection),
            "attributes": .object(JSONObject(attributes.mapValues(JSONValue.string))),
        ]
        if contentType != Self.defaultContentType || !omittingDefaults { members["contentType"] = .string(contentType) }
        if isBase64 || !omittingDefaults { members["encoding"] = .string(isBase64 ? "base64" : "utf8") }
        if !creator.isEmpty || !omittingDefaults { members["creator"] = .string(creator) }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type, a missing required member or a value out
    /// of the bounds above.
    package init?(json: JSONValue) {
        guard let members = json.objectValue, let collection = members["collection"]?.stringValue,
              Self.isValidCollectionName(collection), let attributeObject = members["attributes"]?.objectValue
        else { return nil }
        var attributes: [String: String] = [:]
        for (name, value) in attributeObject {
            guard let text = value.stringValue, attributes[name] == nil else { return nil }
            attributes[name] = text
        }
        guard Self.areValidAttributes(attributes) else { return nil }
        let contentType = members["contentType"], encoding = members["encoding"], creator = members["creator"]
        guard contentType == nil || contentType?.stringValue != nil, creator == nil || creator?.stringValue != nil,
              encoding == nil || encoding?.stringValue == "utf8" || encoding?.stringValue == "base64"
        else { return nil }
        self.init(
            collection: collection, attributes: attributes, contentType: contentType?.stringValue ?? Self.defaultContentType,
            isBase64: encoding?.stringValue == "base64", creator: creator?.stringValue ?? "")
    }
}
