/// Coffer's own `export --format json`: an array of record documents (SPEC.md §6.2) with every
/// member present. Read back exactly, so export → import round-trips every member; the id, dates
/// and revision are the new vault's.
import CofferProvider
enum CofferExportImport {
    /// The members of an exported record document this version reads (SPEC.md §6.2).
    static let knownMembers: Set<String> = [
        "id", "revision", "name", "kind", "tags", "user", "password", "notes", "fields", "otp", "passwordHistory",
        "serviceIdentifiers", "match", "created", "modified", "passkey", "secretService",
    ]

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
            let document = JSONValue.object(members.filter(names: { !["otp", "passkey", "secretService"].contains($0) || members[$0] != .null }))
            let record: Record
            do { record = try RecordCoding.decode(document.canonicalBytes) } catch { throw .malformed(location: origin, reason: "\(error)") }
            for name in ["name", "kind", "tags", "user", "password", "notes", "fields", "otp", "passwordHistory", "serviceIdentifiers", "match",
                         "created", "modified", "passkey", "secretService"] {
                if let value = members[name], value != .null { report.kept(name, as: name, value: "x") }
            }
            // The id and revision are the new vault's; every member, the dates included, is kept.
            report.dropped("id, revision", because: "the new vault's own")
            // A member this version does not know (a newer Coffer's) is named in the report,
            // never dropped without a word (SPEC.md §12).
            for name in members.names where !Self.knownMembers.contains(name) {
                report.dropped(name, because: "a member this version of Coffer does not know")
            }
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(RecordDraft(record), at: origin)))
        }
        return (items, report)
    }
}
