import CofferProvider
import FoundationEssentials

/// Coffer's CSV (`export --format csv`, SPEC.md §12): Chrome's five columns first — so Chrome,
/// Firefox, Bitwarden and most managers import its logins as they import Chrome's — then a
/// column for every other member, so that `import` reads every item back equal. Structured
/// members (fields, history, passkey, Secret Service, a card's and an identity's) are their record-document JSON (§6.2) in
/// one cell; services after the first, and tags, one per line.
enum CofferCSV {
    static let columns = [
        "name", "url", "username", "password", "note", "kind", "urls", "tags", "otpauth", "fields", "match", "history", "passkey",
        "secretservice", "card", "identity", "created", "modified",
    ]

    /// The header and one row per record, CRLF-free (LF between rows).
    static func write(_ records: [Record]) -> String {
        var lines = [header]
        lines.reserveCapacity(records.count + 1)
        for record in records { lines.append(row(record)) }
        return lines.joined(separator: "\n")
    }

    static let header = columns.joined(separator: ",")

    /// One record's line (its cells may hold quoted line breaks).
    static func row(_ record: Record) -> String {
        let document = RecordCoding.document(record, omittingDefaults: true)
        func json(_ name: String) -> String { document[name].map { String(decoding: $0.canonicalBytes, as: UTF8.self) } ?? "" }
        let cells = [
            record.name, record.serviceIdentifiers.first?.identifier ?? "", record.user, record.password, record.notes,
            record.kind.rawValue, record.serviceIdentifiers.dropFirst().map(\.identifier).joined(separator: "\n"),
            record.tags.joined(separator: "\n"), record.otp ?? "", json("fields"), record.matchMode.rawValue, json("passwordHistory"),
            json("passkey"), json("secretService"), json("card"), json("identity"), UTCTimestamp.format(record.created), UTCTimestamp.format(record.modified),
        ]
        return cells.map(CSV.quote).joined(separator: ",")
    }

    /// Reads Coffer's CSV back: each row becomes a record document checked by the record
    /// reader's own rules (§6.2), so a cell that is not what the column says names its line.
    static func read(_ table: CSVTable) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .cofferCSV)
        var items: [ImportedItem] = []
        for (line, value, extra) in table.records(known: columns, report: &report) {
            let origin = "line \(line)"
            func lines(_ column: String) -> [String] {
                value(column).split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
            }
            var members: JSONObject = [
                "id": .string(String(repeating: "0", count: 32)), "revision": .integer(1),
                "serviceIdentifiers": .array((lines("url") + lines("urls")).map { CredentialServiceIdentifier(parsing: $0).json }),
                "user": .string(value("username")), "password": .string(value("password")), "notes": .string(value("note")),
                "name": .string(value("name")), "kind": .string(value("kind").isEmpty ? "login" : value("kind")),
                "tags": .array(lines("tags").map(JSONValue.string)), "match": .string(value("match").isEmpty ? "host" : value("match")),
                "created": .string(value("created")), "modified": .string(value("modified")),
            ]
            if !value("otpauth").isEmpty { members["otp"] = .string(value("otpauth")) }
            for (column, member) in [("fields", "fields"), ("history", "passwordHistory"), ("passkey", "passkey"), ("secretservice", "secretService"),
                                   ("card", "card"), ("identity", "identity")] {
                guard !value(column).isEmpty else { continue }
                guard let parsed = try? JSONValue.parse(value(column)) else { throw .malformed(location: origin, reason: "the \(column) cell is not JSON") }
                members[member] = parsed
            }
            let now = UTCTimestamp.format(RecordCoding.wholeSeconds(Date()))
            if value("created").isEmpty { members["created"] = .string(now) }
            if value("modified").isEmpty { members["modified"] = .string(now) }
            let record: Record
            do { record = try RecordCoding.decode(JSONValue.object(members).canonicalBytes) } catch {
                throw .malformed(location: origin, reason: "\(error)")
            }
            for column in columns { report.kept(column, as: column, value: value(column)) }
            var draft = RecordDraft(record)
            if value("created").isEmpty { draft.created = nil }
            if value("modified").isEmpty { draft.modified = nil }
            draft.fields += extra
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin)))
        }
        return (items, report)
    }
}
