import CofferProvider
import FoundationEssentials

/// 1Password's exports: the CSV of 1Password 8 (`Title,Url,Username,Password,OTPAuth,Favorite,
/// Archived,Tags,Notes`) and the 1PUX archive (a zip whose `export.data` is JSON: accounts → vaults
/// → items, each with `overview`, `details.loginFields`, `details.sections[].fields[]` and
/// `details.passwordHistory`; support.1password.com/1pux-format). Vault names become tags. A
/// document's file and a `file` field's file are the archive's `files/<documentId>__<fileName>`
/// (as KeePassXC's 1PUX reader finds them), imported as the item's attachments.
enum OnePasswordImport {
    static let csvColumns = ["title", "url", "urls", "username", "password", "otpauth", "favorite", "archived", "tags", "notes"]

    static func readCSV(_ table: CSVTable) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .onePassword)
        var items: [ImportedItem] = []
        for (line, value, extra) in table.records(known: csvColumns, report: &report) {
            let origin = "line \(line)"
            var draft = RecordDraft(
                serviceIdentifiers: ImportValues.services([value("url"), value("urls")]), user: value("username"), password: value("password"))
            draft.name = value("title")
            draft.notes = value("notes")
            ImportValues.keepOneTimeCode(value("otpauth"), in: &draft, at: origin, report: &report)
            for tag in value("tags").split(whereSeparator: { $0 == ";" || $0 == "," }) { ImportValues.appending(String(tag), to: &draft.tags) }
            if ImportValues.isTrue(value("favorite")) { draft.tags.append("favorite") }
            if ImportValues.isTrue(value("archived")) { ImportValues.appending("archived", to: &draft.tags) }
            for (column, destination) in [("Title", "name"), ("Url", "service identifiers"), ("Username", "user"), ("Password", "password"),
                                          ("OTPAuth", "one-time code"), ("Tags", "tags"), ("Notes", "notes")] {
                report.kept(column, as: destination, value: value(column.lowercased()))
            }
            report.kept("Favorite", as: "tag 'favorite'", value: ImportValues.isTrue(value("favorite")) ? "1" : "")
            report.kept("Archived", as: "tag 'archived'", value: ImportValues.isTrue(value("archived")) ? "1" : "")
            draft.fields = extra
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin)))
        }
        return (items, report)
    }

    // MARK: 1PUX

    static let exportDataLimit = 64 << 20

    static func readPUX(_ bytes: [UInt8]) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        let archive = try ZipArchive(bytes)
        let data = try archive.member("export.data", limit: exportDataLimit)
        guard let document = try? JSONValue.parse(data), let accounts = document.objectValue?["accounts"]?.arrayValue else {
            throw .malformed(location: "export.data", reason: "not a 1PUX export (no \"accounts\")")
        }
        var report = ImportReport(format: .onePUX)
        var items: [ImportedItem] = []
        for account in accounts {
            for vault in account.objectValue?["vaults"]?.arrayValue ?? [] {
                let vaultName = vault.objectValue?["attrs"]?.objectValue?["name"]?.stringValue ?? ""
                for (index, element) in (vault.objectValue?["items"]?.arrayValue ?? []).enumerated() {
                    guard let item = element.objectValue else { continue }
                    let title = item["overview"]?.objectValue?["title"]?.stringValue ?? ""
                    let origin = "vault '\(vaultName.prefix(30))' item \(index + 1)" + (title.isEmpty ? "" : " '\(title.prefix(40))'")
                    let draft = try self.draft(item, vault: vaultName, origin: origin, report: &report)
                    let files = try attachments(of: item, in: archive, at: origin, report: &report)
                    items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin), attachments: files))
                }
            }
        }
        return (items, report)
    }

    static let categories: [String: ItemKind] = ["001": .login, "005": .login, "002": .card, "003": .note, "004": .identity, "114": .sshKey]

    private static func draft(_ item: JSONObject, vault: String, origin: String, report: inout ImportReport) throws(ImportError) -> RecordDraft {
        let overview = item["overview"]?.objectValue ?? [:]
        let details = item["details"]?.objectValue ?? [:]
        var draft = RecordDraft(serviceIdentifiers: [], user: "", password: "")
        let category = item["categoryUuid"]?.stringValue ?? ""
        draft.kind = categories[category] ?? .note
        if categories[category] == nil { report.kept("category \(category)", as: "note (every field kept)", value: "1") }
        draft.name = overview["title"]?.stringValue ?? ""
        report.kept("overview.title", as: "name", value: draft.name)
        var urls = (overview["urls"]?.arrayValue ?? []).compactMap { $0.objectValue?["url"]?.stringValue }
        if let url = overview["url"]?.stringValue, !urls.contains(url) { urls.insert(url, at: 0) }
        draft.serviceIdentifiers = ImportValues.services(urls)
        for url in urls { report.kept("overview.urls", as: "service identifiers", value: url) }
        for tag in overview["tags"]?.arrayValue ?? [] {
            ImportValues.appending(tag.stringValue ?? "", to: &draft.tags)
            report.kept("overview.tags", as: "tags", value: tag.stringValue ?? "")
        }
        ImportValues.appending(vault, to: &draft.tags)
        report.kept("vault", as: "tag (the vault's name)", value: vault)
        if (item["favIndex"]?.int64Value ?? 0) > 0 {
            draft.tags.append("favorite")
            report.kept("favIndex", as: "tag 'favorite'", value: "1")
        }
        if item["state"]?.stringValue == "archived" {
            ImportValues.appending("archived", to: &draft.tags)
            report.kept("state archived", as: "tag 'archived'", value: "1")
        }
        draft.notes = details["notesPlain"]?.stringValue ?? ""
        report.kept("details.notesPlain", as: "notes", value: draft.notes)
        if let password = details["password"]?.stringValue {  // the Password category
            draft.password = password
            report.kept("details.password", as: "password", value: password)
        }
        for field in details["loginFields"]?.arrayValue ?? [] {
            guard let field = field.objectValue, let value = field["value"]?.stringValue else { continue }
            switch field["designation"]?.stringValue {
            case "username"?:
                draft.user = value
                report.kept("loginFields username", as: "user", value: value)
            case "password"?:
                draft.password = value
                report.kept("loginFields password", as: "password", value: value)
            default:
                let name = field["name"]?.stringValue ?? "field"
                draft.fields.append(RecordField(name: name, value: value, hidden: field["fieldType"]?.stringValue == "P"))
                report.kept("loginFields (other)", as: "fields", value: value)
            }
        }
        for section in details["sections"]?.arrayValue ?? [] {
            for field in section.objectValue?["fields"]?.arrayValue ?? [] {
                guard let field = field.objectValue, let value = field["value"]?.objectValue, let (type, content) = value.first(where: { _ in true })
                else { continue }
                let title = field["title"]?.stringValue ?? ""
                if type == "totp", draft.otp == nil, let uri = content.stringValue, !uri.isEmpty {
                    ImportValues.keepOneTimeCode(uri, in: &draft, at: origin, report: &report)
                    report.kept("sections totp", as: "one-time code", value: uri)
                    continue
                }
                if type == "file" { continue }  // an attachment: `attachments(of:in:at:report:)`
                if let id = field["id"]?.stringValue, Self.readMember(id, content, type: type, into: &draft) {
                    report.kept("sections \(id)", as: draft.kind == .card ? "card" : "identity", value: "1")
                    continue
                }
                guard let text = text(of: content, type: type) else {
                    report.dropped("sections \(type)", because: "a value Coffer cannot store as text")
                    continue
                }
                guard !text.isEmpty else { continue }
                let hidden = ["concealed", "totp", "creditCardNumber"].contains(type)
                draft.fields.append(RecordField(name: title.isEmpty ? type : title, value: text, hidden: hidden))
                report.kept("sections \(type)", as: hidden ? "hidden fields" : "fields", value: text)
            }
        }
        for entry in details["passwordHistory"]?.arrayValue ?? [] {
            guard let object = entry.objectValue, let password = object["value"]?.stringValue, !password.isEmpty else { continue }
            let time = Date(timeIntervalSince1970: TimeInterval(object["time"]?.int64Value ?? 0))
            draft.passwordHistory.append(PasswordHistoryEntry(password: password, replaced: time))
            report.kept("details.passwordHistory", as: "password history", value: password)
        }
        draft.passwordHistory.sort { $0.replaced > $1.replaced }
        draft.passwordHistory = Array(draft.passwordHistory.prefix(Record.maximumPasswordHistory))
        draft.created = item["createdAt"]?.int64Value.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        report.kept("createdAt", as: "created", value: draft.created == nil ? "" : "1")
        draft.modified = item["updatedAt"]?.int64Value.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        report.kept("updatedAt", as: "modified", value: draft.modified == nil ? "" : "1")
        return draft
    }

    /// A Credit Card's or Identity's section field, by the `id` 1Password gives it, as the
    /// card's or identity's member (SPEC.md §6.8); false for any other field (kept as a field).
    private static func readMember(_ id: String, _ value: JSONValue, type: String, into draft: inout RecordDraft) -> Bool {
        let text = value.stringValue ?? ""
        switch draft.kind {
        case .card:
            var card = draft.card ?? CardMember()
            switch id {
            case "cardholder": card.cardholder = text
            case "type": card.brand = text
            case "ccnum": card.number = text
            case "cvv": card.securityCode = text
            case "pin": card.pin = text
            case "issuenumber": card.issueNumber = text
            case "expiry", "validFrom":
                // monthYear: YYYYMM as a number.
                guard let number = value.int64Value, (1...12).contains(number % 100), (1000...9999).contains(number / 100) else { return false }
                if id == "expiry" { (card.expiryMonth, card.expiryYear) = (Int(number % 100), Int(number / 100)) }
                else { (card.startMonth, card.startYear) = (Int(number % 100), Int(number / 100)) }
            default: return false
            }
            guard value.stringValue != nil || id == "expiry" || id == "validFrom" else { return false }
            draft.card = card
        case .identity:
            var identity = draft.identity ?? IdentityMember()
            switch id {
            case "firstname": identity.givenName = text
            case "initial": identity.middleName = text
            case "lastname": identity.familyName = text
            case "company": identity.company = text
            case "defphone": identity.phone = text
            case "email" where type == "email": identity.email = value.objectValue?["email_address"]?.stringValue ?? ""
            case "email": identity.email = text
            case "address":
                // {"street", "city", "state", "zip", "country"}; a country that is none is kept as a field.
                guard let address = value.objectValue, let country = try? ItemRules.country(address["country"]?.stringValue ?? "") else { return false }
                identity.addressLines = (address["street"]?.stringValue ?? "").split(whereSeparator: \.isNewline).map(String.init)
                guard identity.addressLines.count <= IdentityMember.maximumAddressLines else { return false }
                identity.city = address["city"]?.stringValue ?? ""
                identity.region = address["state"]?.stringValue ?? ""
                identity.postalCode = address["zip"]?.stringValue ?? ""
                identity.country = country
            case "username" where draft.user.isEmpty: draft.user = text
            default: return false
            }
            guard value.stringValue != nil || id == "address" || type == "email" else { return false }
            draft.identity = identity
        default: return false
        }
        return true
    }

    /// The item's files: a Document's own (`details.documentAttributes`) and every `file` field's,
    /// each `{fileName, documentId}` naming the archive's `files/<documentId>__<fileName>`. A file
    /// the archive does not hold, or a name an attachment cannot have, is reported dropped.
    private static func attachments(
        of item: JSONObject, in archive: ZipArchive, at origin: String, report: inout ImportReport
    ) throws(ImportError) -> [ImportedAttachment] {
        let details = item["details"]?.objectValue ?? [:]
        var references: [(JSONObject, from: String)] = []
        if let document = details["documentAttributes"]?.objectValue { references.append((document, "details.documentAttributes")) }
        for section in details["sections"]?.arrayValue ?? [] {
            for field in section.objectValue?["fields"]?.arrayValue ?? [] {
                if let file = field.objectValue?["value"]?.objectValue?["file"]?.objectValue { references.append((file, "sections file")) }
            }
        }
        var files: [ImportedAttachment] = []
        for (reference, source) in references {
            let fileName = reference["fileName"]?.stringValue ?? ""
            let path = "files/\(reference["documentId"]?.stringValue ?? "")__\(fileName)"
            guard archive.contains(path) else {
                report.dropped("\(source) '\(fileName.prefix(40))'", because: "the archive holds no \(path.prefix(80))")
                continue
            }
            guard let name = Attachment.usableName(fileName), !files.contains(where: { $0.name == name }) else {
                report.dropped("\(source) '\(fileName.prefix(40))'", because: "no name an attachment can have (or one taken twice)")
                continue
            }
            let content: [UInt8]
            do { content = try archive.member(path, limit: ImportedAttachment.maximumSize) } catch {
                throw .malformed(location: origin, reason: "attachment '\(name)': \(error.reason)")
            }
            files.append(ImportedAttachment(name: name, mediaType: Attachment.mediaType(guessedFrom: name), content: content))
            report.kept(source, as: "attachments", value: "1")
        }
        return files
    }

    /// A section field's value as text: strings as they are, a date as YYYY-MM-DD, a month/year
    /// as YYYY-MM, an address or email object as its parts; `nil` for a file or reference.
    private static func text(of value: JSONValue, type: String) -> String? {
        switch value {
        case .string(let text): return text
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .number where type == "date":
            guard let seconds = value.int64Value else { return nil }
            return String(UTCTimestamp.format(Date(timeIntervalSince1970: TimeInterval(seconds))).prefix(10))
        case .number where type == "monthYear":
            guard let number = value.int64Value else { return nil }
            return "\(number / 100)-" + String(number % 100).leftPadded(to: 2)
        case .number(let text): return text
        case .object(let object) where type == "email": return object["email_address"]?.stringValue ?? ""
        case .object(let object) where type == "sshKey": return object["privateKey"]?.stringValue
        case .object(let object) where type != "file" && type != "reference":
            return object.compactMap { name, value in value.stringValue.flatMap { $0.isEmpty ? nil : "\(name): \($0)" } }.joined(separator: "\n")
        default: return nil
        }
    }
}
