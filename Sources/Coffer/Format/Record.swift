import Foundation

/// One credential: the JSON document sealed inside a record file (SPEC.md §5.2).
///
/// - Warning: holds the password in ordinary memory; keep records short-lived and never log them.
public struct Record: Equatable, Sendable, Codable {
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

    public init(
        id: RecordID, serviceIdentifiers: [CredentialServiceIdentifier], user: String, password: String,
        notes: String = "", fields: [String: String] = [:], created: Date, modified: Date, revision: UInt64
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
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(RecordID.self, forKey: .id)
        serviceIdentifiers = try c.decode([CredentialServiceIdentifier].self, forKey: .serviceIdentifiers)
        user = try c.decode(String.self, forKey: .user)
        password = try c.decode(String.self, forKey: .password)
        notes = try c.decodeIfPresent(String.self, forKey: .notes) ?? ""
        fields = try c.decodeIfPresent([String: String].self, forKey: .fields) ?? [:]
        created = try c.decode(Date.self, forKey: .created)
        modified = try c.decode(Date.self, forKey: .modified)
        revision = try c.decode(UInt64.self, forKey: .revision)
    }
}

/// Canonical JSON for records: UTF-8, sorted keys, no insignificant white space, ISO 8601 UTC
/// dates with whole seconds.
public enum RecordCoding {
    public static func encode(_ record: Record) throws(FormatError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do { return Array(try encoder.encode(record)) } catch { throw .invalidDocument("unencodable record") }
    }

    /// Decodes and validates a record document.
    /// - Throws: `FormatError.invalidDocument` naming the offending field.
    public static func decode<Bytes: ContiguousBytesCollection>(_ bytes: Bytes) throws(FormatError) -> Record {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let record: Record
        do {
            let data = bytes.withContiguousBytes { Data($0) }
            record = try decoder.decode(Record.self, from: data)
        } catch let error as FormatError {
            throw error
        } catch let DecodingError.keyNotFound(key, _) {
            throw .invalidDocument("missing \(key.stringValue)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw .invalidDocument("wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.dataCorrupted(context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw .invalidDocument(path.isEmpty ? "not JSON" : "bad value at \(path)")
        } catch {
            throw .invalidDocument("not a record")
        }
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
