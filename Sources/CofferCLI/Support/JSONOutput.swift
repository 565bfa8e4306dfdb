import Coffer
import FoundationEssentials

/// `--json` output: the format's canonical JSON writer (sorted keys, no escaped slashes), one
/// document per command, with the CLI contract's field names.
enum JSONOutput {
    static func render(_ value: JSONValue) -> String { value.canonicalText }

    /// An identity as `list --json` prints it.
    static func identity(_ identity: PasswordCredentialIdentity) -> JSONValue {
        [
            "serviceIdentifier": service(identity.serviceIdentifier), "user": .string(identity.user),
            "recordIdentifier": .string(identity.recordIdentifier), "rank": .integer(identity.rank),
        ]
    }

    /// A matched identity: `identity(_:)` plus `match` (exact-url, host, registrable-domain),
    /// `matchMode` (the record's) and `automaticFill` (the provision rule, SPEC.md §7.1).
    static func identity(_ ranked: RankedIdentity) -> JSONValue {
        guard case .object(var object) = identity(ranked.identity) else { return .null }
        object["match"] = ranked.match.map { .string($0.level.description) } ?? .null
        object["matchMode"] = .string(ranked.mode.rawValue)
        object["automaticFill"] = .bool(ranked.allowsAutomaticFill)
        return .object(object)
    }

    static func service(_ service: CredentialServiceIdentifier) -> JSONValue {
        ["identifier": .string(service.identifier), "type": .string(service.type.rawValue)]
    }

    /// A whole record as `show --json` and `export` print it.
    static func record(_ record: Record) -> JSONValue {
        [
            "id": .string(record.id.hex), "user": .string(record.user), "password": .string(record.password),
            "notes": .string(record.notes), "fields": .object(JSONObject(record.fields.mapValues(JSONValue.string))),
            "serviceIdentifiers": .array(record.serviceIdentifiers.map(service)),
            "created": .string(date(record.created)), "modified": .string(date(record.modified)),
            "revision": .integer(record.revision), "match": .string(record.matchMode.rawValue),
        ]
    }

    static func date(_ date: Date) -> String {
        UTCTimestamp.format(date)
    }
}
