import Foundation
import Glibc

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
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(UTCTimestamp.format(date))
        }
        do { return Array(try encoder.encode(record)) } catch { throw .invalidDocument("unencodable record") }
    }

    /// Decodes and validates a record document.
    /// - Throws: `FormatError.invalidDocument` naming the offending field.
    public static func decode<Bytes: ContiguousBytesCollection>(_ bytes: Bytes) throws(FormatError) -> Record {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            guard let date = UTCTimestamp.parse(try container.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not YYYY-MM-DDTHH:MM:SSZ")
            }
            return date
        }
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

/// `YYYY-MM-DDTHH:MM:SSZ`, the one date spelling of SPEC.md §5.2, by hand: Foundation's ISO 8601
/// support loads the time-zone database, which costs more than the rest of a fill.
public enum UTCTimestamp {
    public static func format(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // Years are always four digits (0226, not 226): the fuzzer found that a short year did
        // not survive a round trip.
        let year = String(parts.tm_year + 1900)
        return "\(String(repeating: "0", count: max(0, 4 - year.count)) + year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let time = timegm(&parts)
        // timegm normalises 31 February into March: refuse dates that are not what they say.
        guard parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(time))
    }
}
