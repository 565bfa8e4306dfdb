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
    /// The record document (SPEC.md §5.2) with every member present, so a script need not know
    /// the defaults.
    static func record(_ record: Record) -> JSONValue {
        .object(RecordCoding.document(record, omittingDefaults: false))
    }

    static func date(_ date: Date) -> String {
        UTCTimestamp.format(date)
    }
}
