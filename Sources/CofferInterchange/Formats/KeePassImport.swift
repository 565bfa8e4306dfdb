import CofferProvider
import CofferMaintenance
import FoundationEssentials

/// KeePassXC's CSV (`keepassxc-cli export --format csv`) and KeePass 2 XML (KeePass's "KeePass
/// XML (2.x)" export, `keepassxc-cli export --format xml`). Groups become tags (the path below
/// the root group), custom strings fields (protected ones hidden), history entries password
/// history, KeePassXC's `otp` and KeePass's `TimeOtp-*` / `HmacOtp-*` strings one-time codes.
enum KeePassImport {
    static let csvColumns = ["group", "title", "username", "password", "url", "notes", "totp", "icon", "last modified", "created"]

    static func readCSV(_ table: CSVTable) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .keepassxc)
        var items: [ImportedItem] = []
        for (line, value, extra) in table.records(known: csvColumns, report: &report) {
            let origin = "line \(line)"
            var draft = RecordDraft(serviceIdentifiers: ImportValues.services([value("url")]), user: value("username"), password: value("password"))
            draft.name = value("title")
            draft.notes = value("notes")
            if let tag = groupTag(value("group").split(separator: "/").map(String.init)) { draft.tags = [tag] }
            ImportValues.keepOneTimeCode(value("totp"), in: &draft, at: origin, report: &report)
            for (column, destination) in [("Group", "tag (below the root group)"), ("Title", "name"), ("Username", "user"), ("Password", "password"),
                                          ("URL", "service identifiers"), ("Notes", "notes"), ("TOTP", "one-time code")] {
                report.kept(column, as: destination, value: value(column.lowercased()))
            }
            report.dropped("Icon", because: "Coffer has no icons", value: value("icon") == "0" ? "" : value("icon"))
            draft.created = UTCTimestamp.parse(value("created"))
            report.kept("Created", as: "created", value: value("created"))
            draft.modified = UTCTimestamp.parse(value("last modified"))
            report.kept("Last Modified", as: "modified", value: value("last modified"))
            draft.fields = extra
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin)))
        }
        return (items, report)
    }

    /// A group path without the root group; `nil` for an entry of the root itself.
    static func groupTag(_ path: [String]) -> String? {
        let below = path.dropFirst()
        return below.isEmpty ? nil : below.joined(separator: "/")
    }

    // MARK: XML

    static let standardStrings = ["Title", "UserName", "Password", "URL", "Notes", "otp"]

    static func readXML(_ text: String) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        let root = try XMLElement.parse(text)
        guard root.name == "KeePassFile", let top = root.child("Root")?.child("Group") else {
            throw .malformed(location: "line \(root.line)", reason: "not a KeePass 2 XML file (no KeePassFile/Root/Group)")
        }
        var report = ImportReport(format: .keepassXML)
        var items: [ImportedItem] = []
        let binaries = try sharedBinaries(root.child("Meta")?.child("Binaries"))
        try walk(top, path: [], binaries: binaries, items: &items, report: &report)
        return (items, report)
    }

    /// `Meta/Binaries`: the files entries refer to by `ID` (KeePassXC's export: base64, gzip
    /// when `Compressed="True"`).
    static func sharedBinaries(_ element: XMLElement?) throws(ImportError) -> [String: [UInt8]] {
        var binaries: [String: [UInt8]] = [:]
        for binary in element?.children("Binary") ?? [] {
            guard let id = binary.attribute("ID") else { continue }
            binaries[id] = try binaryContent(binary, at: "line \(binary.line)")
        }
        return binaries
    }

    /// A `Binary`'s bytes: base64, gunzipped when it says it is compressed.
    static func binaryContent(_ element: XMLElement, at origin: String) throws(ImportError) -> [UInt8] {
        guard let bytes = Base64.decode(element.text.filter { !$0.isWhitespace }) else {
            throw .malformed(location: origin, reason: "an attachment that is not base64")
        }
        guard element.attribute("Compressed")?.lowercased() == "true" else { return bytes }
        do { return try BackupCompression.gzip.decompress(bytes, limit: ImportedAttachment.maximumSize) } catch {
            throw .malformed(location: origin, reason: "a compressed attachment that does not decompress (\(error))")
        }
    }

    private static func walk(
        _ group: XMLElement, path: [String], binaries: [String: [UInt8]], items: inout [ImportedItem], report: inout ImportReport
    ) throws(ImportError) {
        let here = path + [group.child("Name")?.text ?? ""]
        for entry in group.children("Entry") {
            items.append(try item(entry, tag: groupTag(here), binaries: binaries, report: &report))
        }
        for child in group.children("Group") { try walk(child, path: here, binaries: binaries, items: &items, report: &report) }
    }

    private static func item(_ entry: XMLElement, tag: String?, binaries: [String: [UInt8]], report: inout ImportReport) throws(ImportError) -> ImportedItem {
        let strings = try entry.children("String").map { element throws(ImportError) in try string(element) }
        func value(_ key: String) -> String { strings.first { $0.key == key }?.value ?? "" }
        let origin = "line \(entry.line)" + (value("Title").isEmpty ? "" : " '\(value("Title").prefix(40))'")
        var draft = RecordDraft(serviceIdentifiers: ImportValues.services([value("URL")]), user: value("UserName"), password: value("Password"))
        draft.name = value("Title")
        draft.notes = value("Notes")
        for (key, destination) in [("Title", "name"), ("UserName", "user"), ("Password", "password"), ("URL", "service identifiers"), ("Notes", "notes")] {
            report.kept(key, as: destination, value: value(key))
        }
        if let tag {
            draft.tags.append(tag)
            report.kept("Group", as: "tag (below the root group)", value: tag)
        }
        for tag in entry.child("Tags")?.text.split(whereSeparator: { $0 == ";" || $0 == "," }) ?? [] {
            ImportValues.appending(String(tag), to: &draft.tags)
            report.kept("Tags", as: "tags", value: String(tag))
        }
        var otpKeys: [String] = []
        if !value("otp").isEmpty {
            ImportValues.keepOneTimeCode(value("otp"), in: &draft, at: origin, report: &report)
            otpKeys = ["otp"]
            report.kept("otp", as: "one-time code", value: "1")
        } else if let (uri, keys) = try keePassOTP(strings, account: draft.user, origin: origin) {
            draft.otp = uri
            otpKeys = keys
            report.kept("TimeOtp-*/HmacOtp-*", as: "one-time code", value: "1")
        }
        let passkeyKeys = try keePassXCPasskey(strings, into: &draft, at: origin, report: &report)
        // A card or an identity kept as custom strings ("Card Number", "City"): its members.
        let custom = strings.filter { !standardStrings.contains($0.key) && !otpKeys.contains($0.key) && !passkeyKeys.contains($0.key) }
        let memberKeys = CardAndIdentityAttributes.read(custom.map { ($0.key, $0.value) }, into: &draft)
        for key in memberKeys.sorted() { report.kept("String '\(key)'", as: draft.kind == .card ? "card" : "identity", value: "1") }
        for item in custom where !memberKeys.contains(item.key) {
            draft.fields.append(RecordField(name: item.key, value: item.value, hidden: item.protected))
            report.kept("String '\(item.key)'", as: item.protected ? "hidden field" : "field", value: item.value.isEmpty ? "" : "1")
        }
        for version in entry.child("History")?.children("Entry") ?? [] {
            let old = try version.children("String").map { element throws(ImportError) in try string(element) }
            guard let password = old.first(where: { $0.key == "Password" })?.value, !password.isEmpty, password != draft.password,
                  !draft.passwordHistory.contains(where: { $0.password == password })
            else { continue }
            let date = version.child("Times")?.child("LastModificationTime").flatMap { parseTime($0.text) } ?? Date(timeIntervalSince1970: 0)
            draft.passwordHistory.append(PasswordHistoryEntry(password: password, replaced: RecordCoding.wholeSeconds(date)))
            report.kept("History", as: "password history", value: "1")
        }
        draft.passwordHistory.sort { $0.replaced > $1.replaced }
        draft.passwordHistory = Array(draft.passwordHistory.prefix(Record.maximumPasswordHistory))
        // Attachments: by reference to Meta/Binaries, or inline (older KeePass 2 files).
        var attachments: [ImportedAttachment] = []
        for binary in entry.children("Binary") {
            let key = binary.child("Key")?.text ?? ""
            guard let value = binary.child("Value"), let name = Attachment.usableName(key), !attachments.contains(where: { $0.name == name }) else {
                report.dropped("Binary '\(key.prefix(40))'", because: "no name an attachment can have (or one taken twice)")
                continue
            }
            let content: [UInt8]
            if let reference = value.attribute("Ref") {
                guard let shared = binaries[reference] else {
                    throw .malformed(location: origin, reason: "attachment '\(name)' refers to a binary the file does not hold")
                }
                content = shared
            } else {
                content = try binaryContent(value, at: origin)
            }
            attachments.append(ImportedAttachment(name: name, mediaType: Attachment.mediaType(guessedFrom: name), content: content))
            report.kept("Binary", as: "attachments", value: "1")
        }
        let times = entry.child("Times")
        draft.created = times?.child("CreationTime").flatMap { parseTime($0.text) }
        draft.modified = times?.child("LastModificationTime").flatMap { parseTime($0.text) }
        if let created = draft.created { draft.passkey?.created = RecordCoding.wholeSeconds(created) }
        report.kept("Times", as: "created and modified", value: draft.created == nil ? "" : "1")
        return ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin), attachments: attachments)
    }

    /// KeePassXC's passkey attributes (its browser integration's `KPEX_PASSKEY_*`): the PKCS#8 key as
    /// PEM, the credential id and user handle in base64url, the relying party and the user name.
    /// KeePassXC keeps no counter, so the passkey's is 0. Returns the keys it used; an entry with
    /// some of them but not a readable passkey fails the import naming the entry.
    private static func keePassXCPasskey(
        _ strings: [(key: String, value: String, protected: Bool)], into draft: inout RecordDraft, at origin: String, report: inout ImportReport
    ) throws(ImportError) -> [String] {
        func value(_ key: String) -> String? { strings.first { $0.key == key }?.value }
        guard let pem = value("KPEX_PASSKEY_PRIVATE_KEY_PEM") else { return [] }
        let body = pem.replacing("\\n", with: "\n").split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        let malformed = ImportError.malformed(
            location: origin, reason: "KeePassXC passkey attributes that do not make a passkey (key, credential id, user handle or relying party)")
        guard let key = Base64.decode(body), let id = value("KPEX_PASSKEY_CREDENTIAL_ID").flatMap(Base64.decodeEitherSpelling),
              let handle = value("KPEX_PASSKEY_USER_HANDLE").flatMap(Base64.decodeEitherSpelling), let rpText = value("KPEX_PASSKEY_RELYING_PARTY")
        else { throw malformed }
        guard let rpId = ImportValues.relyingParty(rpText, at: origin, report: &report) else {
            report.dropped("KPEX_PASSKEY_*", because: "its relying party is no domain")
            return ["KPEX_PASSKEY_PRIVATE_KEY_PEM", "KPEX_PASSKEY_CREDENTIAL_ID", "KPEX_PASSKEY_USER_HANDLE", "KPEX_PASSKEY_RELYING_PARTY",
                    "KPEX_PASSKEY_USERNAME", "KPXC_PASSKEY_USERNAME", "KPEX_PASSKEY_FLAG_BE", "KPEX_PASSKEY_FLAG_BS", "KPEX_PASSKEY_GENERATED_USER_ID"]
        }
        let passkey = Passkey(
            credentialID: id, relyingPartyIdentifier: rpId, userHandle: handle,
            userName: value("KPEX_PASSKEY_USERNAME") ?? value("KPXC_PASSKEY_USERNAME") ?? draft.user, privateKey: key,
            created: RecordCoding.wholeSeconds(draft.created ?? Date()))
        guard passkey.isWellFormed else { throw malformed }
        draft.passkey = passkey
        report.kept("KPEX_PASSKEY_*", as: "passkey", value: "1")
        return ["KPEX_PASSKEY_PRIVATE_KEY_PEM", "KPEX_PASSKEY_CREDENTIAL_ID", "KPEX_PASSKEY_USER_HANDLE", "KPEX_PASSKEY_RELYING_PARTY",
                "KPEX_PASSKEY_USERNAME", "KPXC_PASSKEY_USERNAME", "KPEX_PASSKEY_FLAG_BE", "KPEX_PASSKEY_FLAG_BS", "KPEX_PASSKEY_GENERATED_USER_ID"]
    }

    private static func string(_ element: XMLElement) throws(ImportError) -> (key: String, value: String, protected: Bool) {
        let key = element.child("Key")?.text ?? ""
        let value = element.child("Value")
        // Inside a .kdbx the protected values are encrypted with its inner stream key; only an
        // export writes them in the clear (marked ProtectInMemory).
        if value?.attribute("Protected")?.lowercased() == "true" {
            throw .malformed(location: "line \(element.line)", reason: "'\(key)' is encrypted (XML from inside a .kdbx); export with 'KeePass XML (2.x)' or 'keepassxc-cli export --format xml'")
        }
        return (key, value?.text ?? "", value?.attribute("ProtectInMemory")?.lowercased() == "true")
    }

    /// KeePass 2.47+'s one-time-code strings as a Key Uri Format URI, and the keys it used.
    private static func keePassOTP(
        _ strings: [(key: String, value: String, protected: Bool)], account: String, origin: String
    ) throws(ImportError) -> (String, [String])? {
        func value(_ key: String) -> String? { strings.first { $0.key == key }?.value }
        for (prefix, kind) in [("TimeOtp-", "totp"), ("HmacOtp-", "hotp")] {
            guard let secret = value(prefix + "Secret-Base32") else { continue }
            var query = "secret=\(secret.filter { $0 != " " })"
            if let digits = value(prefix + "Length") { query += "&digits=\(digits)" }
            if let period = value(prefix + "Period") { query += "&period=\(period)" }
            if let algorithm = value(prefix + "Algorithm") { query += "&algorithm=\(algorithm.replacing("HMAC-", with: "").replacing("-", with: ""))" }
            if kind == "hotp" { query += "&counter=\(value(prefix + "Counter") ?? "0")" }
            let uri = try ImportValues.otp("otpauth://\(kind)/\(PercentEncoding.encode(account))?\(query)", account: account, at: origin)
            return uri.map { ($0, strings.map(\.key).filter { $0.hasPrefix(prefix) }) }
        }
        return nil
    }

    /// `2024-01-02T03:04:05Z`, or KeePass 2.x's base64 count of seconds since year 1.
    private static func parseTime(_ text: String) -> Date? {
        if let date = UTCTimestamp.parse(text) { return date }
        guard let bytes = Base64.decode(text), bytes.count == 8 else { return nil }
        let seconds = bytes.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return Date(timeIntervalSince1970: TimeInterval(seconds - 62_135_596_800))
    }
}
