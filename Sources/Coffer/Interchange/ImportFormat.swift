import FoundationEssentials

/// The exports Coffer imports, recognised by their header (SPEC.md §11).
public enum ImportFormat: String, CaseIterable, Sendable {
    case chrome, firefox, bitwarden, bitwardenJSON = "bitwarden-json", keepassxc, apple, onePassword = "1password"

    /// Column names as the exporter writes them, lower-cased; what `auto` matches on.
    var columns: (service: [String], user: String, password: String, notes: String?, title: String?) {
        switch self {
        case .chrome: (["url"], "username", "password", "note", "name")
        case .firefox: (["url"], "username", "password", nil, nil)
        case .bitwarden: (["login_uri"], "login_username", "login_password", "notes", "name")
        case .bitwardenJSON: ([], "", "", nil, nil)
        case .keepassxc: (["url"], "username", "password", "notes", "title")
        case .apple: (["url"], "username", "password", "notes", "title")
        case .onePassword: (["url", "urls"], "username", "password", "notes", "title")
        }
    }

    /// Recognises a CSV header.
    static func detect(header: [String]) -> ImportFormat? {
        let names = Set(header.map { $0.lowercased().trimmingSpaces() })
        if names.isSuperset(of: ["login_uri", "login_username", "login_password"]) { return .bitwarden }
        if names.isSuperset(of: ["group", "title", "username", "password", "url"]) { return .keepassxc }
        if names.isSuperset(of: ["url", "username", "password", "httprealm"]) { return .firefox }
        if names.isSuperset(of: ["name", "url", "username", "password"]) { return .chrome }
        if names.isSuperset(of: ["title", "url", "username", "password", "otpauth"]) && names.contains("archived") { return .onePassword }
        if names.isSuperset(of: ["title", "url", "username", "password"]) { return .apple }
        return nil
    }
}

/// One credential read from an export, before it becomes a record.
public struct ImportedCredential: Equatable, Sendable {
    public let line: Int
    public let draft: RecordDraft

    public static func == (lhs: ImportedCredential, rhs: ImportedCredential) -> Bool {
        lhs.line == rhs.line && lhs.draft.user == rhs.draft.user && lhs.draft.password == rhs.draft.password
            && lhs.draft.serviceIdentifiers == rhs.draft.serviceIdentifiers && lhs.draft.notes == rhs.draft.notes
    }
}

public enum ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownFormat
    case malformed(line: Int, reason: String)

    public var description: String {
        switch self {
        case .unknownFormat: "unrecognised export: the header matches no known format (use --format)"
        case .malformed(let line, let reason): "line \(line): \(reason)"
        }
    }
}

/// Reads the exports of browsers and password managers (SPEC.md §11). All or nothing: the
/// first malformed row stops the whole import, naming its line.
public enum CredentialImporter {
    public static func parse(_ text: String, format requested: ImportFormat?) throws(ImportError) -> (ImportFormat, [ImportedCredential]) {
        if requested == .bitwardenJSON || (requested == nil && text.drop { $0.isWhitespace }.hasPrefix("{")) {
            return (.bitwardenJSON, try parseBitwardenJSON(text))
        }
        let rows: [CSV.Row]
        do { rows = try CSV.parse(text) } catch {
            switch error {
            case .unterminatedQuote(let line): throw .malformed(line: line, reason: "a quoted field is never closed")
            case .stray(let line): throw .malformed(line: line, reason: "a quote in the middle of an unquoted field")
            }
        }
        guard let header = rows.first else { throw .unknownFormat }
        guard let format = requested ?? ImportFormat.detect(header: header.fields) else { throw .unknownFormat }
        let names = header.fields.map { $0.lowercased().trimmingSpaces() }
        func column(_ name: String?) -> Int? { name.flatMap { names.firstIndex(of: $0) } }
        let columns = format.columns
        guard let userColumn = column(columns.user), let passwordColumn = column(columns.password),
              let serviceColumn = columns.service.lazy.compactMap(column).first
        else { throw .malformed(line: header.line, reason: "the header lacks the columns of a \(format.rawValue) export") }
        let notesColumn = column(columns.notes), titleColumn = column(columns.title)

        var credentials: [ImportedCredential] = []
        for row in rows.dropFirst() {
            guard row.fields.count == header.fields.count else {
                throw .malformed(line: row.line, reason: "\(row.fields.count) fields where the header has \(header.fields.count)")
            }
            let services = serviceIdentifiers(row.fields[serviceColumn], title: titleColumn.map { row.fields[$0] })
            guard !services.isEmpty else { throw .malformed(line: row.line, reason: "no URL and no title to file it under") }
            credentials.append(ImportedCredential(line: row.line, draft: RecordDraft(
                serviceIdentifiers: services, user: row.fields[userColumn], password: row.fields[passwordColumn],
                notes: notesColumn.map { row.fields[$0] } ?? "")))
        }
        return (format, credentials)
    }

    /// URLs (1Password and Bitwarden may list several, comma or newline separated); a bare
    /// host becomes a domain; without any, the title.
    static func serviceIdentifiers(_ text: String, title: String?) -> [CredentialServiceIdentifier] {
        let parts = text.split(whereSeparator: { $0 == "\n" || $0 == "," }).map { $0.trimmingSpaces() }
        var services = parts.filter { !$0.isEmpty }.map(CredentialServiceIdentifier.init(parsing:))
        if services.isEmpty, let title = title?.trimmingSpaces(), !title.isEmpty {
            services = [CredentialServiceIdentifier(parsing: title)]
        }
        return services
    }

    /// Bitwarden's unencrypted JSON export: `{"items": [{"type": 1, "name", "notes", "login":
    /// {"username", "password", "uris": [{"uri"}]}}]}`; items of other types are skipped.
    static func parseBitwardenJSON(_ text: String) throws(ImportError) -> [ImportedCredential] {
        guard let object = (try? JSONValue.parse(text))?.objectValue else {
            throw .malformed(line: 1, reason: "not a JSON object")
        }
        if object["encrypted"]?.boolValue == true { throw .malformed(line: 1, reason: "an encrypted Bitwarden export; export it unencrypted") }
        guard let items = object["items"]?.arrayValue else { throw .malformed(line: 1, reason: "no \"items\" array") }
        var credentials: [ImportedCredential] = []
        for (number, item) in items.compactMap(\.objectValue).enumerated() where item["type"]?.int64Value == 1 {
            let login = item["login"]?.objectValue ?? [:]
            let uris = (login["uris"]?.arrayValue ?? []).compactMap { $0.objectValue?["uri"]?.stringValue }
            let services = serviceIdentifiers(uris.joined(separator: "\n"), title: item["name"]?.stringValue)
            guard !services.isEmpty else { throw .malformed(line: number + 1, reason: "item \(number + 1) has no URI and no name") }
            credentials.append(ImportedCredential(line: number + 1, draft: RecordDraft(
                serviceIdentifiers: services, user: login["username"]?.stringValue ?? "", password: login["password"]?.stringValue ?? "",
                notes: item["notes"]?.stringValue ?? "")))
        }
        return credentials
    }
}
