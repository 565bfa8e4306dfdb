import CofferProvider
import FoundationEssentials

/// Bitwarden's exports: the CSV (logins and secure notes) and the unencrypted JSON (every item
/// type). Folders become tags, favourites the tag `favorite`, hidden custom fields hidden fields.
/// Shaped by Bitwarden's export format (bitwarden.com/help/condition-bitwarden-import) and its
/// clients' `BitwardenCsvImporter`/`BitwardenJsonImporter`.
enum BitwardenImport {
    /// A personal export's columns; an organisation's has `collections` where it has `folder`.
    static let csvColumns = [
        "folder", "collections", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password", "login_totp",
    ]

    static func readCSV(_ table: CSVTable) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .bitwarden)
        var items: [ImportedItem] = []
        for (line, value, extra) in table.records(known: csvColumns, report: &report) {
            let origin = "line \(line)"
            var draft = RecordDraft(serviceIdentifiers: [], user: "", password: "")
            draft.kind = value("type").lowercased() == "note" ? .note : .login
            draft.name = value("name")
            report.kept("name", as: "name", value: draft.name)
            // Bitwarden writes a multi-line cell with CRLF line breaks.
            draft.notes = ImportValues.unixLineBreaks(value("notes"))
            report.kept("notes", as: "notes", value: draft.notes)
            ImportValues.appending(value("folder"), to: &draft.tags)
            report.kept("folder", as: "tag", value: value("folder"))
            // An organisation's collections, comma-separated, as tags (as its JSON's collectionIds).
            for collection in value("collections").split(separator: ",") {
                ImportValues.appending(String(collection), to: &draft.tags)
                report.kept("collections", as: "tag (the collection's name)", value: String(collection))
            }
            if ImportValues.isTrue(value("favorite")) {
                draft.tags.append("favorite")
                report.kept("favorite", as: "tag 'favorite'", value: "1")
            }
            draft.fields = parseFieldLines(value("fields"))
            report.kept("fields", as: "fields", value: value("fields"))
            if ImportValues.isTrue(value("reprompt")) { report.dropped("reprompt", because: "Coffer asks for the master password for every item") }
            draft.serviceIdentifiers = ImportValues.services([value("login_uri")])
            report.kept("login_uri", as: "service identifiers", value: value("login_uri"))
            draft.user = value("login_username")
            report.kept("login_username", as: "user", value: draft.user)
            draft.password = value("login_password")
            report.kept("login_password", as: "password", value: draft.password)
            let totp = value("login_totp")
            let isCode = ImportValues.keepOneTimeCode(totp, in: &draft, at: origin, report: &report)
            report.kept("login_totp", as: isCode ? "one-time code" : "hidden field '\(ImportValues.unreadableCodeField)'", value: totp)
            draft.fields += extra
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin)))
        }
        return (items, report)
    }

    /// The CSV's `fields` column: one `name: value` per line, the lines ended by LF or CRLF
    /// (`isNewline`: "\r\n" is one Character, which a split on "\n" never meets).
    static func parseFieldLines(_ text: String) -> [RecordField] {
        text.split(whereSeparator: \.isNewline).map { line in
            guard let colon = line.firstIndex(of: ":") else { return RecordField(name: String(line), value: "") }
            return RecordField(name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingSpaces())
        }
    }

    // MARK: JSON

    /// The members of each JSON item this importer maps; anything else is reported as dropped.
    static let itemMembers = [
        "id", "organizationId", "folderId", "type", "reprompt", "name", "notes", "favorite", "fields", "login", "secureNote", "card",
        "identity", "sshKey", "collectionIds", "passwordHistory", "revisionDate", "creationDate", "deletedDate",
    ]

    /// The members of a `fido2Credentials` entry Coffer's passkey keeps (`passkey(_:)`).
    static let passkeyMembers: Set<String> = [
        "credentialId", "keyValue", "rpId", "userHandle", "userName", "userDisplayName", "counter", "discoverable", "creationDate",
    ]

    /// Members a passkey does not keep, and why (the report names each, SPEC.md §12).
    static let passkeyMembersNotKept = [
        "rpName": "Coffer names a passkey's site by its rpId",
        "keyType": "the key itself says its type", "keyAlgorithm": "the key itself says its algorithm", "keyCurve": "the key itself says its curve",
    ]

    /// Bitwarden's `LinkedIdType`: which member a linked custom field shows.
    static let linkedMembers: [Int64: String] = [
        100: "username", 101: "password",
        300: "cardholder name", 301: "expiry month", 302: "expiry year", 303: "security code", 304: "brand", 305: "number",
        400: "title", 401: "middle name", 402: "address 1", 403: "address 2", 404: "address 3", 405: "city", 406: "state",
        407: "postal code", 408: "country", 409: "company", 410: "email", 411: "phone", 412: "SSN", 413: "username",
        414: "passport number", 415: "licence number", 416: "first name", 417: "last name", 418: "full name",
    ]

    static func readJSON(_ text: String) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        guard let document = try? JSONValue.parse(text), let object = document.objectValue else {
            throw .malformed(location: "the file", reason: "not a JSON object")
        }
        if object["encrypted"]?.boolValue == true {
            throw .malformed(location: "the file", reason: "an encrypted Bitwarden export; export it as unencrypted JSON")
        }
        guard let items = object["items"]?.arrayValue else { throw .malformed(location: "the file", reason: "no \"items\" array") }
        var report = ImportReport(format: .bitwardenJSON)
        // An organisation's export has collections where a personal one has folders: both
        // become tags, as a person sees them grouped in Bitwarden.
        var folders: [String: String] = [:]
        for folder in (object["folders"]?.arrayValue ?? []) + (object["collections"]?.arrayValue ?? []) {
            if let id = folder.objectValue?["id"]?.stringValue, let name = folder.objectValue?["name"]?.stringValue { folders[id] = name }
        }
        var imported: [ImportedItem] = []
        imported.reserveCapacity(items.count)
        for (index, element) in items.enumerated() {
            guard let item = element.objectValue else { throw .malformed(location: "item \(index + 1)", reason: "not an object") }
            let origin = "item \(index + 1)" + (item["name"]?.stringValue.map { " '\($0.prefix(40))'" } ?? "")
            imported.append(ImportedItem(origin: origin, draft: try ImportValues.checked(try draft(item, folders: folders, origin: origin, report: &report), at: origin)))
        }
        return (imported, report)
    }

    private static func draft(_ item: JSONObject, folders: [String: String], origin: String, report: inout ImportReport) throws(ImportError) -> RecordDraft {
        var draft = RecordDraft(serviceIdentifiers: [], user: "", password: "")
        draft.name = item["name"]?.stringValue ?? ""
        report.kept("name", as: "name", value: draft.name)
        draft.notes = item["notes"]?.stringValue ?? ""
        report.kept("notes", as: "notes", value: draft.notes)
        if let folder = item["folderId"]?.stringValue {
            guard let name = folders[folder] else { throw .malformed(location: origin, reason: "folderId names no folder of the export") }
            ImportValues.appending(name, to: &draft.tags)
            report.kept("folderId", as: "tag (the folder's name)", value: name)
        }
        for collection in item["collectionIds"]?.arrayValue ?? [] {
            guard let id = collection.stringValue, let name = folders[id] else { continue }
            ImportValues.appending(name, to: &draft.tags)
            report.kept("collectionIds", as: "tag (the collection's name)", value: name)
        }
        if item["favorite"]?.boolValue == true {
            draft.tags.append("favorite")
            report.kept("favorite", as: "tag 'favorite'", value: "1")
        }
        for field in item["fields"]?.arrayValue ?? [] {
            guard let field = field.objectValue else { continue }
            let name = field["name"]?.stringValue ?? ""
            switch field["type"]?.int64Value ?? 0 {
            case 3:  // linked: shows another member of the item and holds no value of its own
                let member = field["linkedId"]?.int64Value.flatMap { linkedMembers[$0] } ?? "another member"
                draft.fields.append(RecordField(name: name, value: "(linked to the item's \(member))"))
                report.kept("fields (linked)", as: "fields naming the linked member", value: "1")
            case let type:  // 0 text, 1 hidden, 2 boolean ("true"/"false")
                draft.fields.append(RecordField(name: name, value: field["value"]?.stringValue ?? "", hidden: type == 1))
                report.kept("fields", as: type == 1 ? "hidden fields" : "fields", value: "1")
            }
        }
        for entry in item["passwordHistory"]?.arrayValue ?? [] {
            guard let entry = entry.objectValue, let password = entry["password"]?.stringValue else { continue }
            let date = entry["lastUsedDate"]?.stringValue.flatMap(ISO8601.parse) ?? Date(timeIntervalSince1970: 0)
            draft.passwordHistory.append(PasswordHistoryEntry(password: password, replaced: RecordCoding.wholeSeconds(date)))
            report.kept("passwordHistory", as: "password history", value: password)
        }
        draft.passwordHistory.sort { $0.replaced > $1.replaced }
        draft.passwordHistory = Array(draft.passwordHistory.prefix(Record.maximumPasswordHistory))
        switch item["type"]?.int64Value {
        case 1?:
            draft.kind = .login
            let login = item["login"]?.objectValue ?? [:]
            let uris = (login["uris"]?.arrayValue ?? []).compactMap { $0.objectValue?["uri"]?.stringValue }
            draft.serviceIdentifiers = ImportValues.services(uris)
            for uri in uris { report.kept("login.uris", as: "service identifiers", value: uri) }
            for uri in login["uris"]?.arrayValue ?? [] where uri.objectValue?["match"].map({ $0 != .null }) == true {
                report.dropped("login.uris.match", because: "Coffer's match mode is per item (--match)")
            }
            draft.user = login["username"]?.stringValue ?? ""
            report.kept("login.username", as: "user", value: draft.user)
            draft.password = login["password"]?.stringValue ?? ""
            report.kept("login.password", as: "password", value: draft.password)
            let totp = login["totp"]?.stringValue ?? ""
            let isCode = ImportValues.keepOneTimeCode(totp, in: &draft, at: origin, report: &report)
            report.kept("login.totp", as: isCode ? "one-time code" : "hidden field '\(ImportValues.unreadableCodeField)'", value: totp)
            for (index, credential) in (login["fido2Credentials"]?.arrayValue ?? []).enumerated() {
                guard index == 0 else {
                    report.dropped("login.fido2Credentials", because: "Coffer keeps one passkey per login (Bitwarden makes one)")
                    continue
                }
                guard let rpId = credential.objectValue?["rpId"]?.stringValue else {
                    throw .malformed(location: origin, reason: "login.fido2Credentials has no rpId")
                }
                guard ImportValues.relyingParty(rpId, at: origin, report: &report) != nil else {
                    report.dropped("login.fido2Credentials", because: "its relying party is no domain")
                    continue
                }
                guard let passkey = Self.passkey(credential) else {
                    throw .malformed(location: origin, reason: "login.fido2Credentials is not a passkey Coffer can read (its key, id or user handle)")
                }
                draft.passkey = passkey
                report.kept("login.fido2Credentials", as: "passkey", value: "1")
                for (member, value) in credential.objectValue ?? [:] where value != .null && !passkeyMembers.contains(member) {
                    report.dropped("login.fido2Credentials.\(member)", because: Self.passkeyMembersNotKept[member] ?? "not a member Coffer knows")
                }
            }
        case 2?:
            draft.kind = .note
        case 3?:
            draft.kind = .card
            var fields = draft.fields
            draft.card = card(item["card"]?.objectValue ?? [:], fields: &fields, report: &report)
            draft.fields = fields
        case 4?:
            draft.kind = .identity
            var (user, fields) = (draft.user, draft.fields)
            draft.identity = identity(item["identity"]?.objectValue ?? [:], user: &user, fields: &fields, report: &report)
            (draft.user, draft.fields) = (user, fields)
        case 5?:
            draft.kind = .sshKey
            draft.fields = members(item["sshKey"], ["privateKey", "publicKey", "keyFingerprint"], hidden: ["privateKey"],
                                   prefix: "sshKey", report: &report) + draft.fields
        default:
            throw .malformed(location: origin, reason: "unknown item type \(item["type"].map { "\($0)" } ?? "(none)")")
        }
        for (name, value) in item where !itemMembers.contains(name) && value != .null {
            report.dropped(name, because: "not a member Coffer knows")
        }
        draft.created = item["creationDate"]?.stringValue.flatMap(ISO8601.parse)
        report.kept("creationDate", as: "created", value: draft.created == nil ? "" : "1")
        draft.modified = item["revisionDate"]?.stringValue.flatMap(ISO8601.parse)
        report.kept("revisionDate", as: "modified", value: draft.modified == nil ? "" : "1")
        if item["reprompt"]?.int64Value == 1 { report.dropped("reprompt", because: "Coffer asks for the master password for every item") }
        return draft
    }

    /// A `fido2Credentials` entry: `credentialId` a UUID (its 16 bytes, as Bitwarden makes them)
    /// or `b64.` and base64url; `keyValue` the PKCS#8 key in base64url (or base64); `counter`
    /// and `discoverable` as strings or values. The key itself is checked when it signs (SPEC.md §6.4).
    static func passkey(_ value: JSONValue) -> Passkey? {
        guard let object = value.objectValue, let id = object["credentialId"]?.stringValue,
              let rpId = object["rpId"]?.stringValue, let keyText = object["keyValue"]?.stringValue,
              let key = Base64.decodeEitherSpelling(keyText)
        else { return nil }
        let credentialID: [UInt8]?
        if id.hasPrefix("b64.") {
            credentialID = Base64.decodeURL(String(id.dropFirst(4)))
        } else if let uuid = UUID(uuidString: id) {
            credentialID = withUnsafeBytes(of: uuid.uuid, Array.init)
        } else {
            credentialID = Base64.decodeURL(id)
        }
        let handle = object["userHandle"]?.stringValue.flatMap(Base64.decodeEitherSpelling)
        let counter = object["counter"].flatMap { $0.stringValue.flatMap { UInt32($0) } ?? $0.int64Value.flatMap { UInt32(exactly: $0) } } ?? 0
        let discoverable = object["discoverable"].map { $0.stringValue.map { $0 != "false" } ?? $0.boolValue ?? true } ?? true
        guard let credentialID, let handle else { return nil }
        let passkey = Passkey(
            credentialID: credentialID, relyingPartyIdentifier: RelyingPartyIdentifier.canonical(from: rpId) ?? rpId, userHandle: handle,
            userName: object["userName"]?.stringValue ?? "", userDisplayName: object["userDisplayName"]?.stringValue ?? "", privateKey: key,
            signCount: counter, created: RecordCoding.wholeSeconds(object["creationDate"]?.stringValue.flatMap(ISO8601.parse) ?? Date()),
            discoverable: discoverable)
        return passkey.isWellFormed ? passkey : nil
    }

    /// A `card` as Coffer's card (SPEC.md §6.8): `expMonth` and `expYear` as numbers (a
    /// two-digit year is 20YY). A value the member's rules refuse (a month "13") is kept as a
    /// field of its Bitwarden name, in front of the item's own fields.
    private static func card(_ object: JSONObject, fields: inout [RecordField], report: inout ImportReport) -> CardMember? {
        var card = CardMember(), leftOver: [RecordField] = []
        func text(_ name: String) -> String { object[name]?.stringValue ?? "" }
        for (name, path) in [("cardholderName", \CardMember.cardholder), ("brand", \.brand), ("number", \.number), ("code", \.securityCode)]
        where !text(name).isEmpty {
            card[keyPath: path] = text(name)
            report.kept("card.\(name)", as: "card", value: text(name))
        }
        let month = text("expMonth"), year = text("expYear")
        if let date = try? ItemRules.cardDate(month.isEmpty ? year : year.isEmpty ? month : "\(month)/\(year)"),
           (date.month != nil) == !month.isEmpty, (date.year != nil) == !year.isEmpty {
            (card.expiryMonth, card.expiryYear) = date
            report.kept("card.expMonth, card.expYear", as: "card", value: month + year)
        } else {
            for (name, value) in [("expMonth", month), ("expYear", year)] where !value.isEmpty {
                leftOver.append(RecordField(name: name, value: value))
                report.kept("card.\(name)", as: "field '\(name)' (not a month 1–12 and a year)", value: value)
            }
        }
        fields = leftOver + fields
        return card.isEmpty ? nil : card
    }

    /// An `identity` as Coffer's identity (SPEC.md §6.8): `address1`–`3` its address lines,
    /// `state` its region, `ssn` its national identifier, `username` the record's user, `country`
    /// read as `ItemRules.country` reads one (a name that is no country is kept as a field).
    private static func identity(_ object: JSONObject, user: inout String, fields: inout [RecordField], report: inout ImportReport) -> IdentityMember? {
        var identity = IdentityMember()
        func text(_ name: String) -> String { object[name]?.stringValue ?? "" }
        let members: [(String, WritableKeyPath<IdentityMember, String>)] = [
            ("title", \.title), ("firstName", \.givenName), ("middleName", \.middleName), ("lastName", \.familyName), ("company", \.company),
            ("city", \.city), ("state", \.region), ("postalCode", \.postalCode), ("phone", \.phone), ("email", \.email),
            ("ssn", \.nationalIdentifier), ("passportNumber", \.passportNumber), ("licenseNumber", \.licenseNumber),
        ]
        for (name, path) in members where !text(name).isEmpty {
            identity[keyPath: path] = text(name)
            report.kept("identity.\(name)", as: "identity", value: text(name))
        }
        identity.addressLines = ["address1", "address2", "address3"].map(text).filter { !$0.isEmpty }
        if !identity.addressLines.isEmpty { report.kept("identity.address1-3", as: "identity", value: "x") }
        let country = text("country")
        if let code = try? ItemRules.country(country) {
            identity.country = code
            report.kept("identity.country", as: "identity", value: code)
        } else {
            fields.insert(RecordField(name: "country", value: country), at: 0)
            report.kept("identity.country", as: "field 'country' (no ISO 3166 country)", value: country)
        }
        if user.isEmpty { user = text("username") }
        report.kept("identity.username", as: "user", value: text("username"))
        return identity.isEmpty ? nil : identity
    }

    /// The string members of an SSH key as fields, in the given order.
    private static func members(
        _ value: JSONValue?, _ names: [String], hidden: [String], prefix: String, report: inout ImportReport
    ) -> [RecordField] {
        guard let object = value?.objectValue else { return [] }
        var fields: [RecordField] = []
        for name in names {
            guard let text = object[name]?.stringValue, !text.isEmpty else { continue }
            fields.append(RecordField(name: name, value: text, hidden: hidden.contains(name)))
            report.kept("\(prefix).\(name)", as: hidden.contains(name) ? "hidden field '\(name)'" : "field '\(name)'", value: text)
        }
        return fields
    }
}

/// ISO 8601 timestamps as exports write them ("2024-01-02T03:04:05.678Z").
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        let whole = text.split(separator: ".").first.map { String($0) + (text.hasSuffix("Z") && !$0.hasSuffix("Z") ? "Z" : "") } ?? text
        return UTCTimestamp.parse(whole)
    }
}
