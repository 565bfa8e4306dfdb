/// A CSV export read against its header, the way exports really are: a row may have fewer
/// fields than the header (older Chrome exports under a newer header) or more; what is there is
/// read and the oddity reported. Columns are found by lower-cased, trimmed name.
import CofferProvider
struct CSVTable {
    let header: [String]
    let rows: [CSV.Row]
    private let names: [String]
    /// The first column of each name: lookups per row in constant time, whatever the width.
    private let columns: [String: Int]

    /// Exports have tens of columns; a header wider than this is refused (SPEC.md §12) rather
    /// than turned into thousands of custom fields per item.
    static let maximumColumns = 4096

    init(_ text: String) throws(ImportError) {
        let rows: [CSV.Row]
        do { rows = try CSV.parse(text) } catch {
            switch error {
            case .unterminatedQuote(let line): throw .malformed(line: line, "a quoted field is never closed")
            case .stray(let line): throw .malformed(line: line, "a quote in the middle of an unquoted field")
            }
        }
        guard let first = rows.first else { throw .unknownFormat }
        guard first.fields.count <= Self.maximumColumns else {
            throw .malformed(line: first.line, "\(first.fields.count) columns; no export has more than \(Self.maximumColumns)")
        }
        header = first.fields
        names = first.fields.map { $0.lowercased().trimmingSpaces() }
        columns = Dictionary(names.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        self.rows = Array(rows.dropFirst())
    }

    func column(_ name: String) -> Int? { columns[name] }

    func has(_ wanted: [String]) -> Bool { wanted.allSatisfy { columns[$0] != nil } }

    /// Each row's fields by column name, reporting short and long rows. `known` are the columns
    /// the importer maps; any other column becomes a custom field, so nothing is dropped.
    func records(known: [String], report: inout ImportReport) -> [(line: Int, value: (String) -> String, extra: [RecordField])] {
        let known = Set(known)
        let unknown = names.indices.filter { !known.contains(names[$0]) && !names[$0].isEmpty }
        return rows.map { row in
            if row.fields.count < header.count {
                report.notice("line \(row.line): \(row.fields.count) fields where the header has \(header.count); the missing ones are empty")
            } else if row.fields.count > header.count {
                let extra = row.fields[header.count...].filter { !$0.isEmpty }
                if !extra.isEmpty {
                    report.notice("line \(row.line): \(row.fields.count - header.count) fields beyond the header, kept as fields 'column N'")
                }
            }
            let fields = row.fields
            let value = { (name: String) -> String in
                guard let index = columns[name], index < fields.count else { return "" }
                return fields[index]
            }
            var extra: [RecordField] = []
            for index in unknown where index < fields.count && !fields[index].isEmpty {
                extra.append(RecordField(name: header[index], value: fields[index]))
                report.kept(header[index], as: "field '\(header[index])'", value: fields[index])
            }
            for index in fields.indices.dropFirst(header.count) where !fields[index].isEmpty {
                extra.append(RecordField(name: "column \(index + 1)", value: fields[index]))
                report.kept("column \(index + 1) (no header)", as: "field 'column \(index + 1)'", value: fields[index])
            }
            return (row.line, value, extra)
        }
    }
}
