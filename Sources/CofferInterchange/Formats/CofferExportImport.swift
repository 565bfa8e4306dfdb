/// Coffer's own `export --format json`: an array of record documents (SPEC.md §6.2) with every
/// member present. Read back exactly, so export → import round-trips every member; the id, dates
/// and revision are the new vault's.
import CofferProvider
enum CofferExportImport {
    /// The members of an exported record document this version reads (SPEC.md §6.2).
    static let knownMembers: Set<String> = [
        "id", "revision", "name", "kind", "tags", "user", "password", "notes", "fields", "otp", "passwordHistory",
        "serviceIdentifiers", "match", "created", "modified", "passkey", "secretService", "attachments", "passwordReportedUnused",
        "card", "identity",
    ]

    /// A record as the export writes it: every member, and each attachment with its content
    /// (base64) in place of its key — the file travels in the export, not in the vault.
    static func document(_ record: Record, content: (Record, Attachment) throws -> [UInt8]) throws -> JSONObject {
        var members = RecordCoding.document(record, omittingDefaults: false)
        members["attachments"] = .array(try record.attachments.map { attachment in
            .object([
                "name": .string(attachment.name), "mediaType": .string(attachment.mediaType), "size": .integer(attachment.size),
                "digest": .string(Hex.encode(attachment.digest)), "added": .string(UTCTimestamp.format(attachment.added)),
                "content": .string(Base64.encode(try content(record, attachment))),
            ])
        })
        return members
    }

    /// The `attachments` of an exported record: each with a name, a media type and its content,
    /// checked against the size and digest it states.
    static func attachments(_ value: JSONValue?, at origin: String) throws(ImportError) -> [ImportedAttachment] {
        guard let value, value != .null else { return [] }
        guard let elements = value.arrayValue else { throw .malformed(location: origin, reason: "attachments is not an array") }
        var result: [ImportedAttachment] = []
        for element in elements {
            guard let members = element.objectValue, let name = members["name"]?.stringValue, Attachment.isValidName(name),
                  let content = members["content"]?.stringValue.flatMap(Base64.decode)
            else { throw .malformed(location: origin, reason: "an attachment without a valid name or base64 content") }
            let mediaType = members["mediaType"]?.stringValue ?? Attachment.defaultMediaType
            guard Attachment.isValidMediaType(mediaType) else { throw .malformed(location: origin, reason: "attachment '\(name)': bad media type") }
            if let size = members["size"]?.uint64Value, size != UInt64(content.count) {
                throw .malformed(location: origin, reason: "attachment '\(name)' is \(content.count) bytes, not the \(size) it states")
            }
            if let digest = members["digest"]?.stringValue, digest != Hex.encode((try? BLAKE2b.hash(content)) ?? []) {
                throw .malformed(location: origin, reason: "attachment '\(name)' does not hold the content its digest names")
            }
            guard !result.contains(where: { $0.name == name }) else { throw .malformed(location: origin, reason: "two attachments named '\(name)'") }
            result.append(ImportedAttachment(name: name, mediaType: mediaType, content: content))
        }
        return result
    }

    static func read(_ text: String) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        guard let document = try? JSONValue.parse(text), let elements = document.arrayValue else {
            throw .malformed(location: "the file", reason: "not a JSON array of records")
        }
        var report = ImportReport(format: .coffer)
        var items: [ImportedItem] = []
        for (index, element) in elements.enumerated() {
            let origin = "record \(index + 1)"
            guard case .object(let members) = element else { throw .malformed(location: origin, reason: "not an object") }
            // The export writes `otp: null` and `passkey: null` for none; the record document omits them.
            let document = JSONValue.object(members.filter(names: {
                $0 != "attachments" && (!["otp", "passkey", "secretService", "card", "identity"].contains($0) || members[$0] != .null)
            }))
            let files = try attachments(members["attachments"], at: origin)
            let record: Record
            do { record = try RecordCoding.decode(document.canonicalBytes) } catch { throw .malformed(location: origin, reason: "\(error)") }
            for name in ["name", "kind", "tags", "user", "password", "notes", "fields", "otp", "passwordHistory", "serviceIdentifiers", "match",
                         "created", "modified", "passkey", "secretService", "card", "identity"] {
                if let value = members[name], value != .null { report.kept(name, as: name, value: "x") }
            }
            // The id and revision are the new vault's; every member, the dates included, is kept.
            report.dropped("id, revision", because: "the new vault's own")
            // A member this version does not know (a newer Coffer's) is named in the report,
            // never dropped without a word (SPEC.md §12).
            for name in members.names where !Self.knownMembers.contains(name) {
                report.dropped(name, because: "a member this version of Coffer does not know")
            }
            if !files.isEmpty { report.kept("attachments", as: "attachments", value: "x") }
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(RecordDraft(record), at: origin), attachments: files))
        }
        return (items, report)
    }
}
