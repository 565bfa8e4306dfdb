import FoundationEssentials

/// One credential: the JSON document sealed inside a record file (SPEC.md §5.2).
///
/// - Warning: holds the password in ordinary memory; keep records short-lived and never log them.
public struct Record: Equatable, Sendable {
    public var id: RecordID
    /// Most specific first; what the identity store indexes and the provider matches.
    public var serviceIdentifiers: [CredentialServiceIdentifier]
    public var user: String
    public var password: String
    public var notes: String
    /// Extra named fields (PINs, security answers); where future fields go in format v1.
    public var fields: [String: String]
    public var created: Date
    public var modified: Date
    /// 1 on creation, +1 on every update; the identity index stores it to detect rollback.
    public var revision: UInt64
    /// How closely a request must match before a host may fill this record without a person
    /// choosing it (SPEC.md §7.1); `match` in the document, omitted when `host`.
    public var matchMode: MatchMode
    /// Members this version does not know, kept as read so that a rewrite preserves what a
    /// newer writer added (SPEC.md §5.2).
    public var otherMembers: JSONObject

    public init(
        id: RecordID, serviceIdentifiers: [CredentialServiceIdentifier], user: String, password: String,
        notes: String = "", fields: [String: String] = [:], created: Date, modified: Date, revision: UInt64,
        matchMode: MatchMode = .host, otherMembers: JSONObject = [:]
    ) {
        self.id = id
        self.serviceIdentifiers = serviceIdentifiers
        self.user = user
        self.password = password
        self.notes = notes
        self.fields = fields
        self.created = created
        self.modified = modified
        self.revision = revision
        self.matchMode = matchMode
        self.otherMembers = otherMembers
    }
}

/// The record document's JSON: canonical on write, strict on read (SPEC.md §5.2).
public enum RecordCoding {
    static let knownMembers = [
        "id", "serviceIdentifiers", "user", "password", "notes", "fields", "created", "modified", "revision", "match",
    ]

    public static func encode(_ record: Record) throws(FormatError) -> [UInt8] {
        var members = record.otherMembers
        members["id"] = .string(record.id.hex)
        members["serviceIdentifiers"] = .array(record.serviceIdentifiers.map(\.json))
        members["user"] = .string(record.user)
        members["password"] = .string(record.password)
        members["notes"] = .string(record.notes)
        members["fields"] = .object(JSONObject(record.fields.mapValues { .string($0) }))
        members["created"] = .string(UTCTimestamp.format(record.created))
        members["modified"] = .string(UTCTimestamp.format(record.modified))
        members["revision"] = .integer(record.revision)
        members["match"] = record.matchMode == .host ? nil : .string(record.matchMode.rawValue)
        return JSONValue.object(members).canonicalBytes
    }

    /// Decodes and validates a record document.
    /// - Throws: `FormatError.invalidDocument` naming the offending member (never its value).
    public static func decode<Bytes: ContiguousBytesCollection>(_ bytes: Bytes) throws(FormatError) -> Record {
        let document: JSONValue
        do { document = try JSONValue.parse(bytes) } catch { throw .invalidDocument("not JSON (\(error))") }
        guard let members = document.objectValue else { throw .invalidDocument("not a JSON object") }
        let reader = MemberReader(members: members)
        let fields = try reader.optional("fields") { value -> [String: String]? in
            guard let object = value.objectValue else { return nil }
            var strings: [String: String] = [:]
            for (name, member) in object {
                // Two names a Dictionary would merge (equal after Unicode normalisation) are
                // refused rather than one of them silently dropped.
                guard let text = member.stringValue, strings.updateValue(text, forKey: name) == nil else { return nil }
            }
            return strings
        }
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
            fields: fields ?? [:],
            created: try reader.required("created") { $0.stringValue.flatMap(UTCTimestamp.parse) },
            modified: try reader.required("modified") { $0.stringValue.flatMap(UTCTimestamp.parse) },
            revision: try reader.required("revision") { $0.uint64Value },
            matchMode: try reader.optional("match") { $0.stringValue.flatMap(MatchMode.init(rawValue:)) } ?? .host,
            otherMembers: members.filter(names: { !knownMembers.contains($0) }))
        try validate(record)
        return record
    }

    /// The rules of SPEC.md §5.2 that JSON types alone do not express.
    public static func validate(_ record: Record) throws(FormatError) {
        guard record.revision >= 1 else { throw .invalidDocument("revision must be at least 1") }
        for service in record.serviceIdentifiers {
            guard !service.identifier.isEmpty, service.identifier.utf8.count <= 2048,
                  !service.identifier.utf8.contains(0)
            else { throw .invalidDocument("serviceIdentifiers") }
        }
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
    var json: JSONValue {
        .object(["identifier": .string(identifier), "type": .string(type.rawValue)])
    }

    init?(json: JSONValue) {
        guard let members = json.objectValue, let identifier = members["identifier"]?.stringValue,
              let type = members["type"]?.stringValue.flatMap(IdentifierType.init(rawValue:))
        else { return nil }
        self.init(identifier: identifier, type: type)
    }
}
