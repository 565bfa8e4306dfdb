/// The exports Coffer imports (SPEC.md §12).
import CofferProvider
public enum ImportFormat: String, CaseIterable, Sendable {
    case chrome, firefox, safari, bitwarden, bitwardenJSON = "bitwarden-json", onePassword = "1password", onePUX = "1pux"
    case keepassxc, keepassXML = "keepass-xml", pass, coffer, cofferCSV = "coffer-csv", cxf
    /// A running Secret Service provider (`import --from secret-service`), not a file.
    case secretService = "secret-service"

    public var displayName: String {
        switch self {
        case .chrome: "Chrome/Chromium/Edge CSV"
        case .firefox: "Firefox CSV"
        case .safari: "Safari/Apple Passwords CSV"
        case .bitwarden: "Bitwarden CSV"
        case .bitwardenJSON: "Bitwarden JSON"
        case .onePassword: "1Password CSV"
        case .onePUX: "1Password 1PUX"
        case .keepassxc: "KeePassXC CSV"
        case .keepassXML: "KeePass 2 XML"
        case .pass: "pass store"
        case .coffer: "Coffer JSON export"
        case .cofferCSV: "Coffer CSV export"
        case .cxf: "Credential Exchange Format (CXF) JSON"
        case .secretService: "Secret Service (the desktop's keyring)"
        }
    }

    /// Recognises a CSV header by the columns its exporter always writes.
    static func detect(_ table: CSVTable) -> ImportFormat? {
        if table.has(["login_uri", "login_username", "login_password"]) { return .bitwarden }
        if table.has(["name", "url", "username", "password", "note", "kind", "otpauth", "fields"]) { return .cofferCSV }
        if table.has(["group", "title", "username", "password", "url"]) { return .keepassxc }
        if table.has(["url", "username", "password", "httprealm"]) { return .firefox }
        if table.has(["name", "url", "username", "password"]) { return .chrome }
        if table.has(["title", "url", "username", "password", "otpauth"]) && table.has(["archived"]) { return .onePassword }
        if table.has(["title", "url", "username", "password"]) { return .safari }
        return nil
    }
}

/// What an import reads: a file's bytes, or a directory (a pass store).
public enum ImportSource {
    case file(bytes: [UInt8], encoding: TextEncoding)
    case directory(Directory)
}

/// Reads an export into items and a report of what became of every column (SPEC.md §12). All or
/// nothing: what cannot be read stops the import, naming its line or item, before anything is
/// written.
public enum ItemImporter {
    /// Largest export read (a 10,000-item export is a few MB).
    public static let maximumFileLength = 256 << 20

    /// - Parameters:
    ///   - format: the exporter; `nil` recognises it (a zip is 1PUX, XML KeePass, `{` Bitwarden
    ///     JSON, `[` Coffer's export, a CSV by its header).
    ///   - environment: for `gpg` (a pass store).
    public static func read(
        _ source: ImportSource, format requested: ImportFormat?, environment: Environment = .process
    ) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        switch source {
        case .directory(let directory):
            guard requested == nil || requested == .pass else { throw .malformed(location: directory.path, reason: "a directory is read only as a pass store") }
            return try PassStoreImport.read(directory, environment: environment)
        case .file(let bytes, let encoding):
            if requested == .onePUX || (requested == nil && bytes.starts(with: [0x50, 0x4B, 0x03, 0x04])) {
                return try OnePasswordImport.readPUX(bytes)
            }
            guard requested != .pass else { throw .malformed(location: "the source", reason: "a pass store is a directory") }
            // Decoded exactly or refused: a byte of a password is never replaced (SPEC.md §12).
            return try read(encoding.decode(bytes), format: requested)
        }
    }

    /// An export already decoded to text.
    public static func read(_ text: String, format requested: ImportFormat?) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }.first
        switch requested {
        case .bitwardenJSON?: return try BitwardenImport.readJSON(text)
        case .keepassXML?: return try KeePassImport.readXML(text)
        case .coffer?: return try CofferExportImport.read(text)
        case .cxf?: return try CredentialExchangeFormat.read(text)
        case nil where start == "{" && containsBytes(text, "\"exporterRpId\""): return try CredentialExchangeFormat.read(text)
        case nil where start == "{": return try BitwardenImport.readJSON(text)
        case nil where start == "<": return try KeePassImport.readXML(text)
        case nil where start == "[": return try CofferExportImport.read(text)
        default: break
        }
        let table = try CSVTable(text)
        guard let format = requested ?? ImportFormat.detect(table) else { throw .unknownFormat }
        switch format {
        case .bitwarden: return try BitwardenImport.readCSV(table)
        case .cofferCSV: return try CofferCSV.read(table)
        case .onePassword: return try OnePasswordImport.readCSV(table)
        case .keepassxc: return try KeePassImport.readCSV(table)
        case .chrome, .firefox, .safari: return try BrowserImport.read(table, format: format)
        default: throw .malformed(location: "the file", reason: "not a \(format.displayName)")
        }
    }
}

/// Pieces every importer shares.
enum ImportValues {
    /// URLs as exports list them (comma, newline or space separated); a bare host becomes a
    /// domain. Never a made-up service: no URL means no service identifier.
    static func services(_ texts: [String]) -> [CredentialServiceIdentifier] {
        var services: [CredentialServiceIdentifier] = []
        for text in texts {
            for part in text.split(whereSeparator: { $0 == "\n" || $0 == "," || $0 == "\r" }) {
                let trimmed = part.trimmingSpaces()
                guard !trimmed.isEmpty, trimmed.utf8.count <= 2048, !trimmed.utf8.contains(0) else { continue }
                let service = CredentialServiceIdentifier(parsing: trimmed)
                if !services.contains(service) { services.append(service) }
            }
        }
        return services
    }

    /// A one-time-code value as a record stores it; a malformed one stops the import, naming
    /// the item (never the secret).
    static func otp(_ text: String, account: String, at origin: String) throws(ImportError) -> String? {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return nil }
        do { return try OneTimeCodeParameters.storedValue(of: trimmed, account: account) } catch {
            throw .malformed(location: origin, reason: "\(error)")
        }
    }

    /// The name of the hidden field that keeps a one-time-code value no generator can read.
    static let unreadableCodeField = "one-time code (unreadable)"

    /// Takes a one-time-code value into `draft`: the code when it reads as one; otherwise —
    /// real exports hold such junk (a note, a half-pasted secret) — the value is kept whole as
    /// the hidden field "one-time code (unreadable)" and the report says so. One bad value
    /// never stops a migration (SPEC.md §12).
    /// - Returns: whether it became the item's one-time code.
    @discardableResult
    static func keepOneTimeCode(_ text: String, in draft: inout RecordDraft, at origin: String, report: inout ImportReport) -> Bool {
        do {
            guard let code = try otp(text, account: draft.user, at: origin) else { return false }
            draft.otp = code
            return true
        } catch {
            draft.fields.append(RecordField(name: unreadableCodeField, value: text, hidden: true))
            report.notice("\(origin): a one-time-code value that is not a code (\(error.reason)); kept as the hidden field '\(unreadableCodeField)'")
            return false
        }
    }

    /// A passkey's rpId as an export spells it, in canonical form (SPEC.md §6.4): a URL's host,
    /// lower case, A-labels, no trailing dot — the change told in the report. `nil`, and told,
    /// when it names no domain (an IP address): the passkey is left out, the login kept.
    static func relyingParty(_ text: String, at origin: String, report: inout ImportReport) -> String? {
        guard let canonical = RelyingPartyIdentifier.canonical(from: text) else {
            report.notice("\(origin): a passkey for '\(text.prefix(80))', which is no domain (passkeys are for domains only): left out, the login kept")
            return nil
        }
        if canonical != text { report.notice("\(origin): the passkey's relying party '\(text.prefix(80))' is stored as '\(canonical)'") }
        return canonical
    }

    /// `text` with each CRLF (and lone CR) as LF: a note typed on Windows reads as one typed here.
    static func unixLineBreaks(_ text: String) -> String {
        guard text.contains(where: { $0 == "\r\n" || $0 == "\r" }) else { return text }
        return text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
    }

    /// Tags from a folder or group path ("Work/Clients" → "Work/Clients"), without duplicates.
    static func appending(_ tag: String, to tags: inout [String]) {
        let trimmed = tag.trimmingSpaces()
        if !trimmed.isEmpty && !tags.contains(trimmed) { tags.append(trimmed) }
    }

    /// Whether an export's boolean column is set ("1", "true", "yes").
    static func isTrue(_ text: String) -> Bool { ["1", "true", "yes"].contains(text.trimmingSpaces().lowercased()) }

    /// What a record may hold: a value over the record's limits stops the import, naming it.
    /// An exporter without item types (KeePass, pass) writes a note as an entry with nothing but
    /// a title and text: with no password, user, service or code, it is a `note`.
    static func checked(_ draft: RecordDraft, at origin: String) throws(ImportError) -> RecordDraft {
        var draft = draft
        if draft.kind == .login, draft.password.isEmpty, draft.user.isEmpty, draft.serviceIdentifiers.isEmpty, draft.otp == nil, draft.passkey == nil {
            draft.kind = .note
        }
        let total = draft.password.utf8.count + draft.notes.utf8.count + draft.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        guard total <= 512 << 10 else { throw .malformed(location: origin, reason: "more than 512 KiB of text in one item") }
        return draft
    }
}

/// Whether `text` holds `needle`, byte for byte: `String.contains` compares by characters,
/// which takes seconds over an export of 100 MiB of files (CXF's `exporterRpId` follows them).
private func containsBytes(_ text: String, _ needle: String) -> Bool {
    var text = text, needle = needle
    return text.withUTF8 { haystack in
        needle.withUTF8 { needle in
            guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
            var index = 0
            let last = haystack.count - needle.count
            while index <= last {
                guard let found = haystack[index...last].firstIndex(of: first) else { return false }
                if haystack[found..<found + needle.count].elementsEqual(needle) { return true }
                index = found + 1
            }
            return false
        }
    }
}
