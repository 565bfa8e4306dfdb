import CofferSupport
import CofferModel
import FoundationEssentials

/// The record document's JSON: canonical on write, strict on read (SPEC.md §6.2).
public enum RecordCoding {
    static let knownMembers = [
        "id", "serviceIdentifiers", "user", "password", "notes", "fields", "created", "modified", "revision", "match",
        "name", "kind", "tags", "otp", "passwordHistory", "passkey", "secretService", "attachments", "passwordReportedUnused",
        "card", "identity",
    ]

    /// Writers omit every optional member at its default (`match` host, `kind` login, empty
    /// `name`, `tags`, `fields`, `passwordHistory`, no `otp`), so a record of format 0.x that is
    /// not edited keeps its bytes; `notes` is always written.
    public static func encode(_ record: Record) throws(FormatError) -> [UInt8] {
        JSONValue.object(document(record, omittingDefaults: true)).canonicalBytes
    }

    /// The record document's members; with `omittingDefaults: false` every member is present
    /// (`otp` as `null` when there is none): what `show --json` and `export` print, and what
    /// an import of Coffer's own export reads back.
    public static func document(_ record: Record, omittingDefaults: Bool) -> JSONObject {
        var members = record.otherMembers
        members["id"] = .string(record.id.hex)
        members["serviceIdentifiers"] = .array(record.serviceIdentifiers.map(\.json))
        members["user"] = .string(record.user)
        members["password"] = .string(record.password)
        members["notes"] = .string(record.notes)
        members["fields"] = record.fields.isEmpty && omittingDefaults ? nil : .array(record.fields.map { field in
            ["name": .string(field.name), "value": .string(field.value), "hidden": .bool(field.hidden)]
        })
        members["created"] = .string(UTCTimestamp.format(record.created))
        members["modified"] = .string(UTCTimestamp.format(record.modified))
        members["revision"] = .integer(record.revision)
        members["match"] = record.matchMode == .host && omittingDefaults ? nil : .string(record.matchMode.rawValue)
        members["name"] = record.name.isEmpty && omittingDefaults ? nil : .string(record.name)
        members["kind"] = record.kind == .login && omittingDefaults ? nil : .string(record.kind.rawValue)
        members["tags"] = record.tags.isEmpty && omittingDefaults ? nil : .array(record.tags.map(JSONValue.string))
        members["otp"] = record.otp.map(JSONValue.string) ?? (omittingDefaults ? nil : .null)
        members["passwordHistory"] = record.passwordHistory.isEmpty && omittingDefaults ? nil : .array(record.passwordHistory.map { entry in
            ["password": .string(entry.password), "replaced": .string(UTCTimestamp.format(entry.replaced))]
        })
        members["passkey"] = record.passkey.map { $0.json(omittingDefaults: omittingDefaults) } ?? (omittingDefaults ? nil : .null)
        members["secretService"] = record.secretService.map { $0.json(omittingDefaults: omittingDefaults) } ?? (omittingDefaults ? nil : .null)
        // An empty card or identity is the member at its default, as an absent one.
        members["card"] = record.card.flatMap { $0.isEmpty ? nil : $0 }.map { $0.json(omittingDefaults: omittingDefaults) } ?? (omittingDefaults ? nil : .null)
        members["identity"] = record.identity.flatMap { $0.isEmpty ? nil : $0 }.map { $0.json(omittingDefaults: omittingDefaults) } ?? (omittingDefaults ? nil : .null)
        members["attachments"] = record.attachments.isEmpty && omittingDefaults ? nil : .array(record.attachments.map { $0.json(omittingDefaults: omittingDefaults) })
        members["passwordReportedUnused"] = record.passwordReportedUnused.map { .string(UTCTimestamp.format($0)) }
        return members
    }

    /// Decodes and validates a record document.
    /// - Throws: `FormatError.invalidDocument` naming the offending member (never its value).
    public static func decode<Bytes: ContiguousBytesCollection>(_ bytes: Bytes) throws(FormatError) -> Record {
        let document: JSONValue
        do { document = try JSONValue.parse(bytes) } catch { throw .invalidDocument("not JSON (\(error))") }
        guard let members = document.objectValue else { throw .invalidDocument("not a JSON object") }
        let reader = MemberReader(members: members)
        let record = Record(
            id: try reader.required("id") { value in value.stringValue.flatMap { try? RecordID(hex: $0) } },
            serviceIdentifiers: try reader.required("serviceIdentifiers") { value in
                value.arrayValue.flatMap { elements in
                    let services = elements.compactMap(CredentialServiceIdentifier.init(json:))
                    return services.count == elements.count ? services : nil
                }
            },
            user: try reader.required("user") { $0.stringValue },
            password: try reader.required("password") { $0.stringValue },
            notes: try reader.optional("notes") { $0.stringValue } ?? "",
            fields: try reader.optional("fields", decodeFields) ?? [],
            created: try reader.required("created") { $0.stringValue.flatMap(UTCTimestamp.parse) },
            modified: try reader.required("modified") { $0.stringValue.flatMap(UTCTimestamp.parse) },
            revision: try reader.required("revision") { $0.uint64Value },
            matchMode: try reader.optional("match") { $0.stringValue.flatMap(MatchMode.init(rawValue:)) } ?? .host,
            name: try reader.optional("name") { $0.stringValue } ?? "",
            kind: try reader.optional("kind") { $0.stringValue.flatMap(ItemKind.init(rawValue:)) } ?? .login,
            tags: try reader.optional("tags") { value in
                value.arrayValue.flatMap { elements in
                    let tags = elements.compactMap(\.stringValue)
                    return tags.count == elements.count ? tags : nil
                }
            } ?? [],
            otp: try reader.optional("otp") { $0.stringValue },  // `null` is refused: writers omit it
            passwordHistory: try reader.optional("passwordHistory") { value in
                value.arrayValue.flatMap { elements in
                    let entries = elements.compactMap { element -> PasswordHistoryEntry? in
                        guard let object = element.objectValue, let password = object["password"]?.stringValue,
                              let replaced = object["replaced"]?.stringValue.flatMap(UTCTimestamp.parse)
                        else { return nil }
                        return PasswordHistoryEntry(password: password, replaced: replaced)
                    }
                    return entries.count == elements.count ? entries : nil
                }
            } ?? [],
            passkey: try reader.optional("passkey") { Passkey(json: $0) },  // `null` is refused: writers omit it
            secretService: try reader.optional("secretService") { SecretServiceMember(json: $0) },
            // An empty object is the member at its default: no member.
            card: try reader.optional("card") { CardMember(json: $0) }.flatMap { $0.isEmpty ? nil : $0 },
            identity: try reader.optional("identity") { IdentityMember(json: $0) }.flatMap { $0.isEmpty ? nil : $0 },
            attachments: try reader.optional("attachments") { value in
                value.arrayValue.flatMap { elements in
                    let attachments = elements.compactMap(Attachment.init(json:))
                    return attachments.count == elements.count ? attachments : nil
                }
            } ?? [],
            passwordReportedUnused: try reader.optional("passwordReportedUnused") { $0.stringValue.flatMap(UTCTimestamp.parse) },
            otherMembers: members.filter(names: { !knownMembers.contains($0) }))
        try validate(record)
        return record
    }

    /// `fields` as an array of `{name, value, hidden}`, or the object of strings format 0.x
    /// wrote (read in its canonical order, never hidden). An object with two names that are
    /// canonically equivalent in Unicode is refused: it cannot be what a conforming writer
    /// wrote (SPEC.md §6.2).
    private static func decodeFields(_ value: JSONValue) -> [RecordField]? {
        if let elements = value.arrayValue {
            let fields = elements.compactMap { element -> RecordField? in
                guard let object = element.objectValue, let name = object["name"]?.stringValue,
                      let value = object["value"]?.stringValue
                else { return nil }
                let hidden = object["hidden"]
                guard hidden == nil || hidden?.boolValue != nil else { return nil }
                return RecordField(name: name, value: value, hidden: hidden?.boolValue ?? false)
            }
            return fields.count == elements.count ? fields : nil
        }
        guard let object = value.objectValue else { return nil }
        var fields: [RecordField] = []
        for (name, member) in object {
            guard let text = member.stringValue, !fields.contains(where: { $0.name == name }) else { return nil }  // `==`: canonical equivalence
            fields.append(RecordField(name: name, value: text))
        }
        return fields
    }

    /// The rules of SPEC.md §6.2 that JSON types alone do not express.
    public static func validate(_ record: Record) throws(FormatError) {
        guard record.revision >= 1 else { throw .invalidDocument("revision must be at least 1") }
        for service in record.serviceIdentifiers {
            guard !service.identifier.isEmpty, service.identifier.utf8.count <= 2048,
                  !service.identifier.utf8.contains(0)
            else { throw .invalidDocument("serviceIdentifiers") }
        }
        guard record.passwordHistory.count <= Record.maximumPasswordHistory else { throw .invalidDocument("passwordHistory longer than 20") }
        guard Set(record.tags).count == record.tags.count else { throw .invalidDocument("tags repeat") }
        guard record.passkey == nil || record.kind == .login else { throw .invalidDocument("passkey on an item that is not a login") }
        guard record.secretService == nil || record.kind == .secret else { throw .invalidDocument("secretService on an item that is not a secret") }
        guard record.card == nil || record.kind == .card else { throw .invalidDocument("card on an item that is not a card") }
        guard record.identity == nil || record.kind == .identity else { throw .invalidDocument("identity on an item that is not an identity") }
        guard record.card?.hasValidDates ?? true else { throw .invalidDocument("card month or year out of range") }
        guard record.identity?.isWellFormed ?? true else { throw .invalidDocument("identity country or address lines") }
        guard record.attachments.count <= Attachment.maximumPerItem else { throw .invalidDocument("more than \(Attachment.maximumPerItem) attachments") }
        guard Set(record.attachments.map(\.name)).count == record.attachments.count else { throw .invalidDocument("attachment names repeat") }
        guard Set(record.attachments.map(\.id)).count == record.attachments.count else { throw .invalidDocument("attachment ids repeat") }
    }

    /// `date` truncated to whole seconds, the precision the format stores.
    public static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

/// Reads named members of a JSON object, with errors that name the member and never its value.
struct MemberReader {
    let members: JSONObject

    func required<T>(_ name: String, _ convert: (JSONValue) -> T?) throws(FormatError) -> T {
        guard let value = members[name] else { throw .invalidDocument("missing \(name)") }
        guard let converted = convert(value) else { throw .invalidDocument("wrong type or value at \(name)") }
        return converted
    }

    func optional<T>(_ name: String, _ convert: (JSONValue) -> T?) throws(FormatError) -> T? {
        guard let value = members[name] else { return nil }
        guard let converted = convert(value) else { throw .invalidDocument("wrong type or value at \(name)") }
        return converted
    }
}

extension CredentialServiceIdentifier {
    /// `{"identifier": string, "type": "domain" | "URL"}`, as records and the journal store it.
    package var json: JSONValue {
        .object(["identifier": .string(identifier), "type": .string(type.rawValue)])
    }

    init?(json: JSONValue) {
        guard let members = json.objectValue, let identifier = members["identifier"]?.stringValue,
              let type = members["type"]?.stringValue.flatMap(IdentifierType.init(rawValue:))
        else { return nil }
        self.init(identifier: identifier, type: type)
    }
}
