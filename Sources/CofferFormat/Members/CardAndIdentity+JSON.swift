import CofferSupport
import CofferModel

/// The `card` and `identity` members of a record document (SPEC.md §6.8): objects of optional
/// members, each omitted at its default ("" or absent), read strictly — a member of the wrong
/// type or out of range makes the record invalid, an unknown one is ignored (§6.2).
extension CardMember {
    static var textMembers: [(String, WritableKeyPath<CardMember, String>)] { [
        ("brand", \.brand), ("cardholder", \.cardholder), ("code", \.securityCode), ("issueNumber", \.issueNumber),
        ("number", \.number), ("pin", \.pin),
    ] }
    static var numberMembers: [(String, WritableKeyPath<CardMember, Int?>)] { [
        ("expiryMonth", \.expiryMonth), ("expiryYear", \.expiryYear), ("startMonth", \.startMonth), ("startYear", \.startYear),
    ] }

    package func json(omittingDefaults: Bool) -> JSONValue {
        var members = JSONObject()
        writeText(Self.textMembers, of: self, into: &members, omittingDefaults: omittingDefaults)
        for (name, path) in Self.numberMembers {
            members[name] = self[keyPath: path].map { .integer(UInt64($0)) } ?? (omittingDefaults ? nil : .null)
        }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type or a month or year out of range. `null`
    /// stands for an absent number (what `show --json` prints).
    package init?(json: JSONValue) {
        guard let members = json.objectValue else { return nil }
        self.init()
        guard readText(Self.textMembers, from: members, into: &self) else { return nil }
        for (name, path) in Self.numberMembers {
            guard let value = members[name], value != .null else { continue }
            guard let number = value.uint64Value, number <= 9999 else { return nil }
            self[keyPath: path] = Int(number)
        }
        guard hasValidDates else { return nil }
    }
}

extension IdentityMember {
    static var textMembers: [(String, WritableKeyPath<IdentityMember, String>)] { [
        ("city", \.city), ("company", \.company), ("country", \.country), ("email", \.email), ("familyName", \.familyName),
        ("givenName", \.givenName), ("licenseNumber", \.licenseNumber), ("middleName", \.middleName),
        ("nationalIdentifier", \.nationalIdentifier), ("passportNumber", \.passportNumber), ("phone", \.phone),
        ("postalCode", \.postalCode), ("region", \.region), ("title", \.title),
    ] }

    package func json(omittingDefaults: Bool) -> JSONValue {
        var members = JSONObject()
        writeText(Self.textMembers, of: self, into: &members, omittingDefaults: omittingDefaults)
        if !addressLines.isEmpty || !omittingDefaults { members["addressLines"] = .array(addressLines.map(JSONValue.string)) }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type, a `country` that is not two upper-case
    /// letters, or more than eight address lines.
    package init?(json: JSONValue) {
        guard let members = json.objectValue else { return nil }
        self.init()
        guard readText(Self.textMembers, from: members, into: &self) else { return nil }
        if let value = members["addressLines"] {
            guard let elements = value.arrayValue else { return nil }
            addressLines = elements.compactMap(\.stringValue)
            guard addressLines.count == elements.count else { return nil }
        }
        guard isWellFormed else { return nil }
    }
}

/// Writes the string members of `value` named in `members`, each left out at "" when omitting defaults.
private func writeText<Root>(_ members: [(String, WritableKeyPath<Root, String>)], of value: Root, into object: inout JSONObject, omittingDefaults: Bool) {
    for (name, path) in members where !value[keyPath: path].isEmpty || !omittingDefaults {
        object[name] = .string(value[keyPath: path])
    }
}

/// Reads them back; false when one is present and not a string.
private func readText<Root>(_ members: [(String, WritableKeyPath<Root, String>)], from object: JSONObject, into value: inout Root) -> Bool {
    for (name, path) in members {
        guard let member = object[name] else { continue }
        guard let text = member.stringValue else { return false }
        value[keyPath: path] = text
    }
    return true
}
