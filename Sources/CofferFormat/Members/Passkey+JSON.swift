import CofferSupport
import CofferCrypto
import CofferModel
import FoundationEssentials

/// The `passkey` member of a record document (SPEC.md §6.4): ids, handle and key in unpadded
/// base64url (libsodium's, constant-time for the key), the creation time in UTC.
extension Passkey {
    /// The member as the record stores it; defaults (`userDisplayName` empty, `counter` 0,
    /// `discoverable` true, no `formerNames`) are left out when `omittingDefaults`, and `hidden`
    /// is there only for a hidden passkey.
    public func json(omittingDefaults: Bool) -> JSONValue {
        var members: JSONObject = [
            "credentialId": .string(Base64.encodeURL(credentialID)), "rpId": .string(relyingPartyIdentifier),
            "userHandle": .string(Base64.encodeURL(userHandle)), "username": .string(userName), "key": .string(Base64.encodeURL(privateKey)),
            "created": .string(UTCTimestamp.format(created)),
        ]
        if !userDisplayName.isEmpty || !omittingDefaults { members["userDisplayName"] = .string(userDisplayName) }
        if signCount != 0 || !omittingDefaults { members["counter"] = .integer(UInt64(signCount)) }
        if !discoverable || !omittingDefaults { members["discoverable"] = .bool(discoverable) }
        if let hidden { members["hidden"] = ["reason": .string(hidden.reason.rawValue), "since": .string(UTCTimestamp.format(hidden.since))] }
        if !formerNames.isEmpty || !omittingDefaults {
            members["formerNames"] = .array(formerNames.map {
                ["username": .string($0.userName), "userDisplayName": .string($0.userDisplayName), "replaced": .string(UTCTimestamp.format($0.replaced))]
            })
        }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type, a missing required member or a length out of
    /// range. The key is not parsed here: a key that does not load makes the passkey unusable,
    /// not the record corrupt (as an SSH key, SPEC.md §6.3).
    public init?(json: JSONValue) {
        guard let members = json.objectValue,
              let credentialID = members["credentialId"]?.stringValue.flatMap(Base64.decodeURL),
              let relyingPartyIdentifier = members["rpId"]?.stringValue,
              let userHandle = members["userHandle"]?.stringValue.flatMap(Base64.decodeURL),
              let userName = members["username"]?.stringValue,
              let privateKey = members["key"]?.stringValue.flatMap(Base64.decodeURL),
              let created = members["created"]?.stringValue.flatMap(UTCTimestamp.parse)
        else { return nil }
        let displayName = members["userDisplayName"], counter = members["counter"], discoverable = members["discoverable"]
        guard displayName == nil || displayName?.stringValue != nil,
              counter == nil || counter?.uint64Value.map({ $0 <= UInt64(UInt32.max) }) == true,
              discoverable == nil || discoverable?.boolValue != nil
        else { return nil }
        self.init(
            credentialID: credentialID, relyingPartyIdentifier: relyingPartyIdentifier, userHandle: userHandle, userName: userName,
            userDisplayName: displayName?.stringValue ?? "", privateKey: privateKey, signCount: UInt32(counter?.uint64Value ?? 0),
            created: created, discoverable: discoverable?.boolValue ?? true)
        if let value = members["hidden"] {
            guard let object = value.objectValue, let reason = object["reason"]?.stringValue.flatMap(PasskeyHiding.Reason.init(rawValue:)),
                  let since = object["since"]?.stringValue.flatMap(UTCTimestamp.parse)
            else { return nil }
            hidden = PasskeyHiding(reason: reason, since: since)
        }
        if let value = members["formerNames"] {
            guard let elements = value.arrayValue, elements.count <= PasskeyFormerName.maximumCount else { return nil }
            for element in elements {
                guard let object = element.objectValue, let name = object["username"]?.stringValue,
                      let display = object["userDisplayName"]?.stringValue, let replaced = object["replaced"]?.stringValue.flatMap(UTCTimestamp.parse)
                else { return nil }
                formerNames.append(PasskeyFormerName(userName: name, userDisplayName: display, replaced: replaced))
            }
        }
        guard isWellFormed else { return nil }
    }
}
