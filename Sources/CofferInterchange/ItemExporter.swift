import CofferProvider
import CofferSystem
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
    /// An export in parts found a part other than the one it checked (an item was changed or
    /// removed by another process meanwhile): it stops there, and what it wrote is incomplete.
    case changedDuringExport

    public var description: String {
        switch self {
        case .doesNotReadBack(let reason): "the export does not read back (\(reason)); nothing was written"
        case .changedDuringExport: "the vault changed while it was exported; what was written is incomplete"
        }
    }
}

/// The first pass of an export in parts (`ItemExporter.checkInParts`): what the format would
/// lose, the whole text's length, and a digest of each part, which the second pass matches.
public struct ExportCheck: Sendable {
    public let format: ExportFormat
    public let leftOut: [ExportResult.LeftOut]
    /// UTF-8 bytes of the whole export.
    public let length: Int
    let digests: [[UInt8]]
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
        return ExportResult(text: text, leftOut: try readBack(text, of: records, as: format), passkeysLeftOutForTheirCounter: counters)
    }

    /// What each of `records` loses in `text`, read back by the importer of `format`.
    private static func readBack(_ text: String, of records: [Record], as format: ExportFormat) throws -> [ExportResult.LeftOut] {
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
        return leftOut
    }

    // MARK: In parts

    /// The formats an export in parts writes: those whose document is its items one after
    /// another (CSV's rows after the header, JSON's array), so a part reads back on its own and
    /// the parts joined are the document `export` writes, byte for byte. CXF nests its items
    /// in one account and is written whole.
    public static func writesInParts(_ format: ExportFormat) -> Bool { format != .cxf }

    /// The first of an export's two passes over a vault too large to hold at once (SPEC.md §12):
    /// each part (`records(part)`, for `parts` parts; called from several threads at once) is
    /// written and read back as `export` does, then let go, keeping what it would lose and a
    /// digest of its text. Nothing is written.
    public static func checkInParts(
        _ parts: Int, as format: ExportFormat, records: (Int) throws -> [Record],
        content: (Record, Attachment) throws -> [UInt8] = { _, _ in [] }
    ) throws -> ExportCheck {
        precondition(writesInParts(format))
        // On every core, each worker holding one part at a time: reading a part back is most of
        // an export's time.
        let checked = try concurrentMap(parts) { part in
            let records = try records(part)
            let text = try partText(records, as: format, content: content)
            let document = opening(format) + piece(text, afterAnother: false, as: format) + closing(format)
            return (leftOut: try readBack(document, of: records, as: format), digest: try BLAKE2b.hash(Array(text.utf8)), length: text.utf8.count)
        }
        var length = opening(format).utf8.count + closing(format).utf8.count
        for (position, part) in checked.filter({ $0.length > 0 }).enumerated() {
            length += separator(before: position > 0, as: format).utf8.count + part.length
        }
        return ExportCheck(format: format, leftOut: checked.flatMap(\.leftOut), length: length, digests: checked.map(\.digest))
    }

    /// The second pass: each part written again and handed to `write` only when its text is the
    /// one the first pass checked (its digest); a part that differs (an item changed meanwhile)
    /// stops the export with `.changedDuringExport`. The pieces joined are `export`'s text.
    public static func writeInParts(
        _ check: ExportCheck, records: (Int) throws -> [Record], content: (Record, Attachment) throws -> [UInt8] = { _, _ in [] },
        write: (String) -> Void
    ) throws {
        let format = check.format
        var written = false
        write(opening(format))
        for part in check.digests.indices {
            let text = try partText(records(part), as: format, content: content)
            guard try BLAKE2b.hash(Array(text.utf8)) == check.digests[part] else { throw ExportError.changedDuringExport }
            guard !text.isEmpty else { continue }
            write(piece(text, afterAnother: written, as: format))
            written = true
        }
        write(closing(format))
    }

    /// One part's text: its CSV rows, or its JSON documents, joined as the whole document joins them.
    private static func partText(_ records: [Record], as format: ExportFormat, content: (Record, Attachment) throws -> [UInt8]) throws -> String {
        switch format {
        case .csv: records.map(CofferCSV.row).joined(separator: "\n")
        case .json: try records.map { try JSONValue.object(CofferExportImport.document($0, content: content)).canonicalText }.joined(separator: ",")
        case .cxf: preconditionFailure("CXF is written whole")
        }
    }

    /// What comes before the first part (CSV's header; JSON's `[`) and after the last.
    private static func opening(_ format: ExportFormat) -> String { format == .csv ? CofferCSV.header : "[" }
    private static func closing(_ format: ExportFormat) -> String { format == .csv ? "" : "]" }

    /// What stands before a non-empty part: CSV's line break (after the header or the part
    /// before); JSON's comma after another part, nothing before the first.
    private static func separator(before afterAnother: Bool, as format: ExportFormat) -> String {
        format == .csv ? "\n" : afterAnother ? "," : ""
    }

    /// A part's text as it stands in the document (nothing for an empty part).
    private static func piece(_ text: String, afterAnother: Bool, as format: ExportFormat) -> String {
        text.isEmpty ? "" : separator(before: afterAnother, as: format) + text
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
