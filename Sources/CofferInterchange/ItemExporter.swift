import CofferProvider
import FoundationEssentials

/// The formats `coffer export` writes (SPEC.md §12).
public enum ExportFormat: String, CaseIterable, Sendable {
    /// Coffer's CSV: Chrome's columns first, then every other member (`CofferCSV`).
    case csv
    /// Coffer's record documents with every member (`CofferExportImport` reads them).
    case json
    /// The FIDO Alliance's Credential Exchange Format (`CredentialExchangeFormat`).
    case cxf

    /// The importer that reads this export back.
    var importFormat: ImportFormat {
        switch self {
        case .csv: .cofferCSV
        case .json: .coffer
        case .cxf: .cxf
        }
    }
}

/// An export and what it could not carry.
public struct ExportResult: Sendable {
    /// One item that would not come back whole from the export: its title and the members that
    /// would be lost or changed (the record document's names, §6.2).
    public struct LeftOut: Sendable, Equatable {
        public let title: String
        public let members: [String]
    }

    /// The document: canonical JSON for `json` and `cxf`, CSV text for `csv`.
    public let text: String
    public let leftOut: [LeftOut]
    /// CXF only: titles of items whose passkey was left out for its signature counter (CXF
    /// carries none, so a non-zero one cannot be moved safely), for a message that says why.
    public let passkeysLeftOutForTheirCounter: [String]
}

public enum ExportError: Error, Sendable, CustomStringConvertible {
    /// The export does not read back: a defect in Coffer's own writer, never in the vault.
    case doesNotReadBack(String)

    public var description: String {
        switch self {
        case .doesNotReadBack(let reason): "the export does not read back (\(reason)); nothing was written"
        }
    }
}

/// Writes an export and proves what it carries: the text is read back by the importer of its
/// own format and every item compared with the record it came from, member by member (SPEC.md
/// §12). So an export either carries every member or names what it would lose — a new member
/// that a writer forgets is reported, never dropped without a word.
public enum ItemExporter {
    /// - Parameter content: an attachment's bytes (read from the vault), for the formats that
    ///   carry files (json, cxf).
    public static func export(
        _ records: [Record], as format: ExportFormat, accountID: [UInt8], content: (Record, Attachment) throws -> [UInt8] = { _, _ in [] }
    ) throws -> ExportResult {
        let text: String
        var counters: [String] = []
        switch format {
        case .csv: text = CofferCSV.write(records)
        case .json: text = JSONValue.array(try records.map { try .object(CofferExportImport.document($0, content: content)) }).canonicalText
        case .cxf:
            let exported = try CredentialExchangeFormat.export(records, accountID: accountID, content: content)
            text = exported.document.canonicalText
            counters = exported.passkeysLeftOut
        }
        let readBack: [ImportedItem]
        do { readBack = try ItemImporter.read(text, format: format.importFormat).items } catch {
            throw ExportError.doesNotReadBack("\(error)")
        }
        guard readBack.count == records.count else {
            throw ExportError.doesNotReadBack("\(readBack.count) items read back from \(records.count) records")
        }
        var leftOut: [ExportResult.LeftOut] = []
        for (record, item) in zip(records, readBack) {
            var lost = differences(RecordDraft(record), item.draft)
            // Files come back whole: the same names, types and bytes (by their digests).
            let files = record.attachments.map { "\($0.name) \($0.mediaType) \($0.size) \(Hex.encode($0.digest))" }
            let returned = item.attachments.map { "\($0.name) \($0.mediaType) \($0.content.count) \(Hex.encode((try? BLAKE2b.hash($0.content)) ?? []))" }
            if files != returned { lost.append("attachments") }
            if !lost.isEmpty { leftOut.append(.init(title: record.title, members: lost)) }
        }
        return ExportResult(text: text, leftOut: leftOut, passkeysLeftOutForTheirCounter: counters)
    }

    /// The members (record-document names) in which `readBack` differs from `original`.
    public static func differences(_ original: RecordDraft, _ readBack: RecordDraft) -> [String] {
        var members: [String] = []
        func check(_ name: String, _ same: Bool) { if !same { members.append(name) } }
        check("name", original.name == readBack.name)
        check("kind", original.kind == readBack.kind)
        check("serviceIdentifiers", original.serviceIdentifiers == readBack.serviceIdentifiers)
        check("user", original.user == readBack.user)
        check("password", original.password == readBack.password)
        check("notes", original.notes == readBack.notes)
        check("fields", original.fields == readBack.fields)
        check("tags", original.tags == readBack.tags)
        check("otp", original.otp == readBack.otp)
        check("match", original.matchMode == readBack.matchMode)
        check("passwordHistory", original.passwordHistory == readBack.passwordHistory)
        check("passkey", original.passkey == readBack.passkey)
        check("secretService", original.secretService == readBack.secretService)
        check("card", original.card == readBack.card)
        check("identity", original.identity == readBack.identity)
        check("passwordReportedUnused", original.passwordReportedUnused == readBack.passwordReportedUnused)
        check("created", original.created == readBack.created)
        check("modified", original.modified == readBack.modified)
        return members
    }
}
