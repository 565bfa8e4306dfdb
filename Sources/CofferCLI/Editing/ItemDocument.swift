import Coffer
import CofferTerminalKit

/// An item as plain text: what `coffer show` prints and what `coffer edit` opens in `$EDITOR`
/// or reads from stdin — one format, so `coffer show X | coffer edit X` changes nothing
/// (SPEC.md §10.2). pass's shape: the password on line 1, then `key: value` lines — `name`,
/// `kind`, `user`, one `url` per service, `tags` (comma-separated), `match`, custom fields in
/// order (a hidden one as `key (hidden): value`), `otp`, a card's or an identity's members
/// (`ItemDocument+CardAndIdentity`), then the read-only `passkey` (its relying
/// party, user and algorithm — never its key), `secret service` (a Secret Service item's
/// collection, attributes and content type), one `attachment` per file (name, size, type), `id`, `revision`, `modified` and `password history` — then, after a blank line, the notes, verbatim.
///
/// A custom field named like a member key is written `field KEY: value`. A value that spans
/// lines continues on lines that start with one tab (as mail headers fold), so an SSH key or a
/// multi-line field round-trips; notes never need it.
///
/// The text is only a spelling: what an item's members may hold is `ItemContent`'s and
/// `ItemRules`' (the library's, which every host shares); this type adds what only a text has —
/// lines, the mask, a removed line.
struct ItemDocument: Equatable {
    static let memberKeys = ["name", "kind", "user", "url", "tags", "match", "otp", "passkey", "secret service", "attachment", "id", "revision", "modified", "password history"]
        + ItemContent.memberLineKeys
    static let hiddenMarker = " (hidden)"
    static let mask = "********"
    static let maskedReason = "hidden values are masked (********) in this text, as 'show' prints them on a terminal; use 'coffer show ENTRY | …' or 'coffer edit ENTRY'"

    var content: ItemContent
    /// Read-only lines: shown for a person, checked (`id`) or ignored (the others) when read.
    var id: String?
    var revision: String?
    var modified: String?
    var passwordHistory: String?
    var passkey: String?
    var secretService: String?
    /// One line per attached file: its name, size and media type (`coffer attachment` handles them).
    var attachments: [String] = []

    /// A new item's text: its members, none of the read-only lines.
    init(content: ItemContent) {
        self.content = content
    }

    init(_ record: Record) {
        content = ItemContent(record)
        id = record.id.hex
        revision = String(record.revision)
        modified = JSONOutput.date(record.modified)
        passwordHistory = record.passwordHistory.isEmpty ? nil : "\(record.passwordHistory.count) (show --json)"
        passkey = record.passkey.map { passkey in
            let algorithm = (try? PasskeyPrivateKey(pkcs8: passkey.privateKey))?.algorithm.name ?? "unusable key"
            var line = "\(passkey.relyingPartyIdentifier), \(passkey.userName.isEmpty ? "(no user name)" : passkey.userName), \(algorithm)"
            if let name = passkey.formerNames.first { line += ", formerly \(name.userName)" }
            if let hidden = passkey.hidden {
                line += ", hidden since \(JSONOutput.date(hidden.since)): \(hidden.explanation) (edit --unhide-passkey offers it again)"
            }
            return line
        }
        attachments = record.attachments.map { "\($0.name) (\(Attachment.describe(size: $0.size)), \($0.mediaType))" }
        secretService = record.secretService.map { member in
            let attributes = member.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return (["collection \(member.collection)"] + attributes + (member.isBase64 ? ["\(member.contentType), base64"] : [member.contentType]))
                .joined(separator: ", ")
        }
    }

    struct ParseError: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    /// The text. `masked` writes hidden fields as `********` (for a terminal: such text is for
    /// the eye, and is refused by `edit`). `template` writes every member line of a card or an
    /// identity, empty ones too (what an editor opens, so a person sees what there is to fill).
    func text(masked: Bool = false, template: Bool = false) -> String {
        let content = content
        var lines = [Self.folded(content.password)]
        func add(_ key: String, _ value: String) { lines.append(key + ": " + Self.folded(value)) }
        if !content.name.isEmpty { add("name", content.name) }
        if content.kind != .login { add("kind", content.kind.rawValue) }
        if content.kind == .login || !content.user.isEmpty { add("user", content.user) }
        for service in content.services { add("url", service.identifier) }
        if !content.tags.isEmpty { add("tags", content.tags.joined(separator: ", ")) }
        if content.matchMode != .host { add("match", content.matchMode.rawValue) }
        for field in content.fields {
            let key = (Self.memberKeys.contains(field.name.lowercased()) || field.name.hasPrefix("field ") ? "field " : "") + field.name
            add(Self.escapedKey(key) + (field.hidden ? Self.hiddenMarker : ""), field.hidden && masked ? Self.mask : field.value)
        }
        if let otp = content.otp { add("otp", masked ? Self.mask : otp) }
        for (key, value) in memberLines(allKeys: template, masked: masked) { add(key, value) }
        if let passkey { add("passkey", passkey) }
        if let secretService { add("secret service", secretService) }
        for attachment in attachments { add("attachment", attachment) }
        if let id { add("id", id) }
        if let revision { add("revision", revision) }
        if let modified { add("modified", modified) }
        if let passwordHistory { add("password history", passwordHistory) }
        let notes = content.notes
        return lines.joined(separator: "\n") + "\n\n" + notes + (notes.isEmpty || notes.hasSuffix("\n") ? "" : "\n")
    }

    /// A value's later lines, each after one tab.
    static func folded(_ value: String) -> String {
        value.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n\t")
    }

    /// A field name cannot hold `:` or a line break as written: those become `%3A`, `%0A`, and
    /// `%` itself `%25`.
    static func escapedKey(_ key: String) -> String {
        var result = ""
        for character in key {
            switch character {
            case "%": result += "%25"
            case ":": result += "%3A"
            case "\n": result += "%0A"
            case "\r": result += "%0D"
            default: result.append(character)
            }
        }
        return result
    }

    static func unescapedKey(_ key: String) -> String {
        key.replacing("%3A", with: ":").replacing("%0A", with: "\n").replacing("%0D", with: "\r").replacing("%25", with: "%")
    }

    /// Reads a text: an edited one, or what `show` printed. Each member is read by `ItemRules`,
    /// so a typo is shown with its line, not stored; then the whole item is checked as every
    /// host's is (`ItemContent.check()`).
    ///
    /// - Parameter original: the item as it was before the edit. Then a key that is no member
    ///   and no field the item had is refused (`usr: alice` is a typo, not a new field: a new
    ///   field is written `field NAME: value`), and so is a text without a line the item's kind
    ///   always has (`user` of a login, `kind` of anything else), which would otherwise wipe the
    ///   user name or turn a card into a login (SPEC.md §10.2). Without it (a test, the reader
    ///   of a text of its own), any other key is a custom field.
    init(parsing text: String, editing original: ItemDocument? = nil) throws(ParseError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if lines.last == "" { lines.removeLast() }
        guard !lines.isEmpty else { throw ParseError(line: 1, reason: "empty: the first line is the password") }
        content = ItemContent()
        // Unfold first: (line number, key line with its continuations joined).
        var entries: [(number: Int, text: String)] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if index > 0 && line.trimmingSpaces().isEmpty {
                let notes = lines[(index + 1)...].joined(separator: "\n")
                content.notes = notes.hasSuffix("\n") ? String(notes.dropLast()) : notes
                break
            }
            if index > 0 && line.hasPrefix("\t") {
                entries[entries.count - 1].text += "\n" + line.dropFirst()
            } else {
                entries.append((index + 1, line))
            }
            index += 1
        }
        content.password = entries[0].text
        var keys: Set<String> = []
        var lineOf: [ItemRuleViolation.Member: Int] = [:]
        var memberLineOf: [String: Int] = [:]
        for (number, line) in entries.dropFirst() {
            let key = try read(line, number: number, knownFields: original.map { Set($0.content.fields.map(\.name)) }, kind: original?.content.kind)
            keys.insert(key)
            if let member = ItemRuleViolation.Member(rawValue: key == "url" ? "service" : key == "tags" ? "tag" : key) { lineOf[member] = number }
            if let line = ItemContent.memberLines.first(where: { $0.key == key }) {
                lineOf[line.kind == .card ? .card : .identity] = lineOf[line.kind == .card ? .card : .identity] ?? number
                memberLineOf[key] = memberLineOf[key] ?? number
            }
        }
        // A card's key on a login is most likely a custom field written without `field `.
        if let line = ItemContent.memberLines.first(where: { $0.kind != content.kind && memberLineOf[$0.key] != nil }) {
            throw ParseError(line: memberLineOf[line.key]!, reason: "'\(line.key)' is a member of a\(line.kind == .identity ? "n" : "") \(line.kind.rawValue), and this item's kind is \(content.kind.rawValue); a custom field is written 'field \(line.key): value'")
        }
        if let original {
            let required = original.content.kind == .login ? "user" : "kind"
            if !keys.contains(required) {
                throw ParseError(line: 1, reason: "the '\(required):' line was removed; keep it (\(required == "user" ? "'user:' with nothing after it clears the user name" : "it says what the item is"))")
            }
        }
        if content.password == Self.mask || content.fields.contains(where: { $0.hidden && $0.value == Self.mask }) || content.otp == Self.mask {
            throw ParseError(line: 1, reason: Self.maskedReason)
        }
        if content.card?.isEmpty == true { content.card = nil }  // an editor's empty template lines
        if content.identity?.isEmpty == true { content.identity = nil }
        do { try content.check() } catch {
            throw ParseError(line: lineOf[error.member] ?? 1, reason: error.reason)
        }
    }

    /// Reads one `key: value` line.
    /// - Parameter knownFields: the edited item's field names, when unknown keys are refused.
    /// - Returns: the member key read (lower-cased), or "field" for a custom field.
    private mutating func read(_ line: String, number: Int, knownFields: Set<String>?, kind: ItemKind?) throws(ParseError) -> String {
        guard let colon = line.firstIndex(of: ":") else {
            throw ParseError(line: number, reason: "expected 'key: value' (a blank line starts the notes)")
        }
        var key = String(line[..<colon]).trimmingSpaces()
        var value = String(line[line.index(after: colon)...])
        if value.hasPrefix(" ") { value.removeFirst() }
        do {
            switch key.lowercased() {
            case "name": content.name = value
            case "user": content.user = value
            case "url", "service": content.services.append(try ItemRules.service(value)); return "url"
            case "tags": content.tags = ItemRules.tags(value)
            case "kind": content.kind = try ItemRules.kind(value)
            case "match": content.matchMode = try ItemRules.matchMode(value)
            case "otp":
                // The mask is kept as written, to be refused with the others after the last line.
                content.otp = value.trimmingSpaces() == Self.mask ? Self.mask : try ItemRules.oneTimeCode(value, account: content.user)
            case "id": id = value.trimmingSpaces()
            case "revision": revision = value.trimmingSpaces()
            case "modified": modified = value.trimmingSpaces()
            case "password history": passwordHistory = value.trimmingSpaces()
            case "passkey": passkey = value.trimmingSpaces()  // read-only: an edit keeps the record's passkey
            case "secret service": secretService = value.trimmingSpaces()  // read-only, as the passkey line
            case "attachment": attachments.append(value.trimmingSpaces())  // read-only: 'coffer attachment' changes them
            case let member where ItemContent.memberLineKeys.contains(member):
                // The mask is kept as written, to be refused with the others after the last line.
                let line = ItemContent.memberLines.first { $0.key == member }!
                guard !line.masked || value.trimmingSpaces() != Self.mask else { throw ParseError(line: number, reason: Self.maskedReason) }
                try line.read(&content, value)
            default:
                let hidden = key.hasSuffix(Self.hiddenMarker)
                if hidden { key.removeLast(Self.hiddenMarker.count) }
                let declared = key.hasPrefix("field ")
                if declared { key.removeFirst("field ".count) }
                guard !key.isEmpty else { throw ParseError(line: number, reason: "a field without a name") }
                let name = Self.unescapedKey(key)
                if let knownFields, !declared, !knownFields.contains(name) {
                    throw ParseError(line: number, reason: "unknown key '\(String(name.prefix(40)))'; the keys are \(Self.editableKeys(of: kind ?? .login).joined(separator: ", ")), and a new custom field is written 'field \(String(name.prefix(40))): value'")
                }
                content.fields.append(RecordField(name: name, value: value, hidden: hidden))
                return "field"
            }
        } catch let violation as ItemRuleViolation {
            throw ParseError(line: number, reason: violation.reason)
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError(line: number, reason: "\(error)")
        }
        return key.lowercased()
    }

    /// The member keys a person writes (the others are shown, and read back unchanged).
    static func editableKeys(of kind: ItemKind) -> [String] {
        ["name", "kind", "user", "url", "tags", "match", "otp"] + ItemContent.memberLines.filter { $0.kind == kind }.map(\.key)
    }

    /// Refuses a text that names another item (`id`), so a `show A | edit B` cannot copy A over B.
    func check(isOf recordID: RecordID) throws(ParseError) {
        if let id, id != recordID.hex {
            throw ParseError(line: 1, reason: "this text is of item \(id.prefix(8)), not \(recordID.hex.prefix(8))")
        }
    }
}
