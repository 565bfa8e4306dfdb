import CofferProvider
import CofferHostKit
import FoundationEssentials

/// `--json` output: the format's canonical JSON writer (sorted keys, no escaped slashes), one
/// document per command, with the CLI contract's field names.
package enum JSONOutput {
    package static func render(_ value: JSONValue) -> String { value.canonicalText }

    /// An identity as `list --json` prints it.
    package static func identity(_ identity: PasswordCredentialIdentity) -> JSONValue {
        [
            "serviceIdentifier": service(identity.serviceIdentifier), "user": .string(identity.user),
            "recordIdentifier": .string(identity.recordIdentifier), "rank": .integer(identity.rank),
        ]
    }

    /// A whole listing as a JSON array, streamed row by row in canonical form (the bytes
    /// `render` would give for the same values: keys in byte order, no white space). A row is an
    /// identity with its `type` ("password", "oneTimeCode" or "passkey", whose service is the
    /// relying party's id) and `name`, or an item without identities (`type` "item", its
    /// `kind`, and its service if any).
    package static func writeRows(of listing: IdentityListing, to output: inout StreamedOutput) {
        output.append("[")
        writeRows(of: listing, vault: nil, to: &output, first: true)
        output.append("]\n")
    }

    /// The rows of a listing inside an array the caller opens and closes; a team's rows carry
    /// `"vault": TEAM` (SPEC.md §16.6), which sorts last.
    package static func writeRows(of listing: IdentityListing, vault: String?, to output: inout StreamedOutput, first: Bool) {
        var vaultMember: [UInt8] = []
        if let vault { vaultMember = Array((",\"vault\":" + JSONValue.string(vault).canonicalText + "}").utf8) }
        listing.withUnsafeText { text in
            func string(_ range: Range<Int>) { JSONValue.writeString(utf8: UnsafeBufferPointer(rebasing: text[range]), to: &output.bytes) }
            func ascii(_ value: String) {
                var value = value
                value.withUTF8 { output.append($0) }
            }
            var hex = [UInt8](repeating: 0, count: 2 * identifierByteCount)
            for (position, row) in listing.rows.enumerated() {
                if position > 0 || !first { output.append(",") }
                hex.withUnsafeMutableBufferPointer { row.recordID.writeHex(to: $0.baseAddress!) }
                switch row.entry {
                case .password, .oneTimeCode, .passkey:
                    output.append("{\"name\":")
                    string(row.name)
                    output.append(",\"rank\":")
                    ascii(String(row.rank))
                    output.append(",\"recordIdentifier\":\"")
                    output.bytes += hex
                    output.append("\",\"serviceIdentifier\":{\"identifier\":")
                    string(row.identifier)
                    output.append(",\"type\":\"")
                    ascii(row.type.rawValue)
                    output.append(row.entry == .password ? "\"},\"type\":\"password\",\"user\":" : row.entry == .passkey ? "\"},\"type\":\"passkey\",\"user\":" : "\"},\"type\":\"oneTimeCode\",\"user\":")
                case .item:
                    output.append("{\"kind\":\"")
                    ascii(row.kind.rawValue)
                    output.append("\",\"name\":")
                    string(row.name)
                    output.append(",\"recordIdentifier\":\"")
                    output.bytes += hex
                    // The item's least service identifier (SPEC.md §7.3), as text: its type is not indexed.
                    if !row.identifier.isEmpty {
                        output.append("\",\"service\":")
                        string(row.identifier)
                        output.append(",\"type\":\"item\",\"user\":")
                    } else {
                        output.append("\",\"type\":\"item\",\"user\":")
                    }
                }
                string(row.user)
                if vault == nil { output.append("}") } else { output.bytes += vaultMember }
                output.endRow()
            }
        }
    }

    /// A matched identity: `identity(_:)` plus `match` (exact-url, host, registrable-domain),
    /// `matchMode` (the record's) and `automaticFill` (the provision rule, SPEC.md §8.1).
    package static func identity(_ ranked: RankedIdentity) -> JSONValue {
        guard case .object(var object) = identity(ranked.identity) else { return .null }
        object["match"] = ranked.match.map { .string($0.level.description) } ?? .null
        object["matchMode"] = .string(ranked.mode.rawValue)
        object["automaticFill"] = .bool(ranked.allowsAutomaticFill)
        return .object(object)
    }

    /// What `add --json` and `edit --json` print: the item as a list shows it (its first
    /// service as `serviceIdentifier`, absent when it has none), never a secret.
    package static func summary(_ record: Record) -> JSONValue {
        var object: JSONObject = [
            "recordIdentifier": .string(record.id.hex), "user": .string(record.user), "rank": 0,
            "name": .string(record.name), "kind": .string(record.kind.rawValue), "tags": .array(record.tags.map(JSONValue.string)),
            "otp": .bool(record.otp != nil),
        ]
        if let first = record.serviceIdentifiers.first { object["serviceIdentifier"] = service(first) }
        return .object(object)
    }

    package static func service(_ service: CredentialServiceIdentifier) -> JSONValue {
        ["identifier": .string(service.identifier), "type": .string(service.type.rawValue)]
    }

    /// A whole record as `show --json` and `export` print it.
    /// The record document (SPEC.md §6.2) with every member present, so a script need not know
    /// the defaults. A passkey's private key is printed only by an explicit export
    /// (`withPasskeyKey`): `show` names the passkey, never its key (SPEC.md §6.4).
    package static func record(_ record: Record, withPasskeyKey: Bool = false) -> JSONValue {
        var document = RecordCoding.document(record, omittingDefaults: false)
        if !withPasskeyKey, case .object(var passkey)? = document["passkey"] {
            passkey["key"] = nil
            document["passkey"] = .object(passkey)
        }
        // An attachment's key opens a file that is not in this output: it stays in the vault.
        document["attachments"] = .array(record.attachments.map(attachment))
        return .object(document)
    }

    /// An attachment as `show --json` and `attachment list --json` print it: never its key.
    package static func attachment(_ attachment: Attachment) -> JSONValue {
        .object([
            "id": .string(attachment.id.hex), "name": .string(attachment.name), "mediaType": .string(attachment.mediaType),
            "size": .integer(attachment.size), "digest": .string(Hex.encode(attachment.digest)), "added": .string(date(attachment.added)),
        ])
    }

    package static func date(_ date: Date) -> String {
        UTCTimestamp.format(date)
    }
}
