import Coffer

/// An item as the plain text `coffer edit` opens in `$EDITOR` (pass's shape): the password on
/// line 1, then `key: value` lines — `name`, `kind`, `user`, one `url` per service, `tags`
/// (comma-separated), `match`, custom fields in order (a hidden one as `key (hidden): value`), `otp`
/// — then, after a blank line, the notes. A custom field named like one of those keys is written
/// `field KEY: value`. Values with line breaks (other than notes) cannot be written this way and
/// are refused rather than mangled.
struct ItemDocument: Equatable {
    static let memberKeys = ["name", "kind", "user", "url", "tags", "match", "otp"]
    static let hiddenMarker = " (hidden)"

    var password: String
    var name: String
    var kind: ItemKind
    var user: String
    var services: [CredentialServiceIdentifier]
    var tags: [String]
    var matchMode: MatchMode
    var fields: [RecordField]
    var otp: String?
    var notes: String

    init(_ record: Record) {
        password = record.password
        name = record.name
        kind = record.kind
        user = record.user
        services = record.serviceIdentifiers
        tags = record.tags
        matchMode = record.matchMode
        fields = record.fields
        otp = record.otp
        notes = record.notes
    }

    struct ParseError: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    /// The text; throws when a value cannot be written on one line.
    func text() throws(ParseError) -> String {
        var lines = [password]
        func add(_ key: String, _ value: String) throws(ParseError) {
            guard !value.contains(where: \.isNewline) else {
                throw ParseError(line: lines.count + 1, reason: "'\(key)' holds a line break, which this text form cannot show; use the library or --json")
            }
            lines.append("\(key): \(value)")
        }
        guard !password.contains(where: \.isNewline) else { throw ParseError(line: 1, reason: "the password holds a line break") }
        try add("name", name)
        if kind != .login { try add("kind", kind.rawValue) }
        try add("user", user)
        for service in services { try add("url", service.identifier) }
        if !tags.isEmpty { try add("tags", tags.joined(separator: ", ")) }
        if matchMode != .host { try add("match", matchMode.rawValue) }
        for field in fields {
            let key = (Self.memberKeys.contains(field.name.lowercased()) || field.name.hasPrefix("field ") ? "field " : "") + field.name
            guard !key.contains(":"), !key.contains(where: \.isNewline) else {
                throw ParseError(line: lines.count + 1, reason: "the field name '\(field.name.prefix(40))' holds a ':' or a line break")
            }
            try add(key + (field.hidden ? Self.hiddenMarker : ""), field.value)
        }
        if let otp { try add("otp", otp) }
        return lines.joined(separator: "\n") + "\n\n" + notes + (notes.isEmpty || notes.hasSuffix("\n") ? "" : "\n")
    }

    /// Reads an edited text. Unknown keys are custom fields; `kind`, `match`, `otp` and
    /// services are checked here so a typo is shown in the editor, not stored.
    init(parsing text: String) throws(ParseError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if lines.last == "" { lines.removeLast() }
        guard let first = lines.first else { throw ParseError(line: 1, reason: "empty: the first line is the password") }
        password = first
        name = ""; kind = .login; user = ""; services = []; tags = []; matchMode = .host; fields = []; otp = nil; notes = ""
        var number = 1
        for line in lines.dropFirst() {
            number += 1
            if line.trimmingSpaces().isEmpty {
                notes = lines[number...].joined(separator: "\n")
                break
            }
            guard let colon = line.firstIndex(of: ":") else {
                throw ParseError(line: number, reason: "expected 'key: value' (a blank line starts the notes)")
            }
            var key = String(line[..<colon]).trimmingSpaces()
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            switch key.lowercased() {
            case "name": name = value
            case "user": user = value
            case "url":
                let trimmed = value.trimmingSpaces()
                guard !trimmed.isEmpty else { throw ParseError(line: number, reason: "an empty url") }
                services.append(CredentialServiceIdentifier(parsing: trimmed))
            case "tags": tags = value.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
            case "kind":
                guard let parsed = ItemKind(rawValue: value.trimmingSpaces()) else {
                    throw ParseError(line: number, reason: "kind must be one of \(ItemKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                kind = parsed
            case "match":
                guard let parsed = MatchMode(rawValue: value.trimmingSpaces()) else {
                    throw ParseError(line: number, reason: "match must be site, host, exact or never")
                }
                matchMode = parsed
            case "otp":
                let trimmed = value.trimmingSpaces()
                if trimmed.isEmpty { otp = nil; continue }
                do { otp = try OneTimeCodeParameters.storedValue(of: trimmed, account: user) } catch {
                    throw ParseError(line: number, reason: "\(error)")
                }
            default:
                let hidden = key.hasSuffix(Self.hiddenMarker)
                if hidden { key.removeLast(Self.hiddenMarker.count) }
                if key.hasPrefix("field ") { key.removeFirst("field ".count) }
                guard !key.isEmpty else { throw ParseError(line: number, reason: "a field without a name") }
                fields.append(RecordField(name: key, value: value, hidden: hidden))
            }
        }
    }

    func apply(to record: inout Record) {
        record.password = password
        record.name = name
        record.kind = kind
        record.user = user
        record.serviceIdentifiers = services
        record.tags = tags
        record.matchMode = matchMode
        record.fields = fields
        record.otp = otp
        record.notes = notes.hasSuffix("\n") ? String(notes.dropLast()) : notes
    }
}
