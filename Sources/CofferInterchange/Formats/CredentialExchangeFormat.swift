import CofferProvider
import FoundationEssentials

/// The FIDO Alliance's Credential Exchange Format (CXF 1.0, JSON): `export --format cxf` and its
/// import (SPEC.md §12.3). One CXF item per record; a login's user and password are a
/// `basic-auth` credential, its passkey a `passkey`, a TOTP code a `totp`, notes a `note`, fields
/// `custom-fields` (hidden ones `concealed-string`), a card and an identity their own credentials
/// (`CredentialExchangeFormat+CardAndIdentity`). What CXF has no place for — the item's kind
/// other than login, its match mode, password history, a HOTP or Steam code, the exact spelling
/// of a TOTP URI, a passkey's own creation date — travels in the
/// item extension `coffer-item`, which other importers ignore and Coffer reads back, so a
/// Coffer → Coffer round trip loses nothing. As CXF requires, a passkey whose signature counter
/// is not 0 is left out of an export (and said so), and an imported passkey's counter is 0.
/// An attachment is a `file` credential (name, size, SHA-256); as this document is no CXP archive
/// with a `documents` folder, its bytes travel in the extension's `files`.
public enum CredentialExchangeFormat {
    static let extensionName = "coffer-item"

    /// The export document and the titles of items whose passkey was left out.
    /// - Parameter content: an attachment's bytes, read from the vault.
    public static func export(
        _ records: [Record], accountID: [UInt8], at date: Date = Date(), content: (Record, Attachment) throws -> [UInt8] = { _, _ in [] }
    ) throws -> (document: JSONValue, passkeysLeftOut: [String]) {
        var leftOut: [String] = []
        let items: [JSONValue] = try records.map { record in
            var credentials: [JSONValue] = []
            var extra: JSONObject = ["name": .string(extensionName)]
            if !record.user.isEmpty || !record.password.isEmpty {  // a card or note may hold a password too
                credentials.append(["type": "basic-auth", "username": field(record.user), "password": field(record.password, concealed: true)])
            }
            if let passkey = record.passkey {
                if passkey.signCount == 0 {
                    credentials.append([
                        "type": "passkey", "credentialId": .string(Base64.encodeURL(passkey.credentialID)), "rpId": .string(passkey.relyingPartyIdentifier),
                        "username": .string(passkey.userName), "userDisplayName": .string(passkey.userDisplayName),
                        "userHandle": .string(Base64.encodeURL(passkey.userHandle)), "key": .string(Base64.encodeURL(passkey.privateKey)),
                    ])
                    if passkey.created != record.created { extra["passkeyCreated"] = .string(UTCTimestamp.format(passkey.created)) }
                    // A hidden passkey's state and former names (SPEC.md §6.4), as the record writes them.
                    let members = passkey.json(omittingDefaults: true).objectValue ?? [:]
                    if let hidden = members["hidden"] { extra["passkeyHidden"] = hidden }
                    if let names = members["formerNames"] { extra["passkeyFormerNames"] = names }
                } else {
                    leftOut.append(record.title)
                }
            }
            if let otp = record.otp {
                if let code = try? OneTimeCodeParameters(parsing: otp), code.kind == .totp {
                    var totp: JSONObject = [
                        "type": "totp", "secret": .string(Base32.encode(code.secret)), "period": .integer(UInt64(code.period)),
                        "digits": .integer(UInt64(code.digits)), "algorithm": .string(code.algorithm.rawValue.lowercased()),
                    ]
                    if !code.account.isEmpty { totp["username"] = .string(code.account) }
                    if !code.issuer.isEmpty { totp["issuer"] = .string(code.issuer) }
                    credentials.append(.object(totp))
                    if code.uri != otp { extra["otp"] = .string(otp) }  // the stored spelling, for the way back
                } else {
                    extra["otp"] = .string(otp)
                }
            }
            if let card = record.card { credentials += Self.credentials(of: card, extra: &extra) }
            if let identity = record.identity { credentials += Self.credentials(of: identity, extra: &extra) }
            if !record.notes.isEmpty { credentials.append(["type": "note", "content": field(record.notes)]) }
            if !record.fields.isEmpty {
                credentials.append(["type": "custom-fields", "fields": .array(record.fields.map { field($0.value, concealed: $0.hidden, label: $0.name) })])
            }
            var files: [JSONValue] = []
            for attachment in record.attachments {
                let bytes = try content(record, attachment)
                let id = JSONValue.string(Base64.encodeURL(attachment.id.bytes))
                credentials.append([
                    "type": "file", "id": id, "name": .string(attachment.name), "decryptedSize": .integer(UInt64(bytes.count)),
                    "integrityHash": .string(Base64.encodeURL(SHA256Digest.hash(bytes))),
                ])
                files.append(["id": id, "mediaType": .string(attachment.mediaType), "content": .string(Base64.encode(bytes))])
            }
            if !files.isEmpty { extra["files"] = .array(files) }
            if record.kind != .login { extra["kind"] = .string(record.kind.rawValue) }
            if record.matchMode != .host { extra["match"] = .string(record.matchMode.rawValue) }
            if !record.passwordHistory.isEmpty {
                extra["passwordHistory"] = .array(record.passwordHistory.map {
                    ["password": .string($0.password), "replaced": .string(UTCTimestamp.format($0.replaced))]
                })
            }
            var item: JSONObject = [
                "id": .string(Base64.encodeURL(record.id.bytes)), "title": .string(record.name.isEmpty ? record.title : record.name),
                "creationAt": .integer(UInt64(record.created.timeIntervalSince1970)), "modifiedAt": .integer(UInt64(record.modified.timeIntervalSince1970)),
                "credentials": .array(credentials),
            ]
            if !record.serviceIdentifiers.isEmpty {
                item["scope"] = ["urls": .array(record.serviceIdentifiers.map { .string($0.identifier) }), "androidApps": []]
            }
            if !record.tags.isEmpty { item["tags"] = .array(record.tags.map(JSONValue.string)) }
            if record.name.isEmpty, !record.title.isEmpty { extra["unnamed"] = true }
            if let member = record.secretService { extra["secretService"] = member.json(omittingDefaults: true) }
            if let reported = record.passwordReportedUnused { extra["passwordReportedUnused"] = .string(UTCTimestamp.format(reported)) }
            if extra.count > 1 { item["extensions"] = [.object(extra)] }
            return .object(item)
        }
        let document: JSONValue = [
            "version": ["major": 1, "minor": 0], "exporterRpId": "coffer.invalid", "exporterDisplayName": "Coffer",
            "timestamp": .integer(UInt64(date.timeIntervalSince1970)),
            "accounts": [["id": .string(Base64.encodeURL(accountID)), "username": "", "email": "", "collections": [], "items": .array(items)]],
        ]
        return (document, leftOut)
    }

    private static func field(_ value: String, concealed: Bool = false, label: String? = nil) -> JSONValue {
        var object: JSONObject = ["fieldType": .string(concealed ? "concealed-string" : "string"), "value": .string(value)]
        if let label { object["label"] = .string(label) }
        return .object(object)
    }

    // MARK: Import

    static func read(_ text: String) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        guard let document = try? JSONValue.parse(text), let header = document.objectValue, header["exporterRpId"] != nil,
              let accounts = header["accounts"]?.arrayValue
        else { throw .malformed(location: "the file", reason: "not a Credential Exchange Format document (no exporterRpId and accounts)") }
        guard header["version"]?.objectValue?["major"]?.int64Value == 1 else {
            throw .malformed(location: "the file", reason: "a CXF version other than 1")
        }
        var report = ImportReport(format: .cxf)
        var items: [ImportedItem] = []
        for account in accounts {
            for (index, value) in (account.objectValue?["items"]?.arrayValue ?? []).enumerated() {
                guard let item = value.objectValue else { throw .malformed(location: "item \(index + 1)", reason: "not an object") }
                let origin = "item \(index + 1) '\((item["title"]?.stringValue ?? "").prefix(40))'"
                let (draft, files) = try read(item, at: origin, report: &report)
                items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin), attachments: files))
            }
            if !(account.objectValue?["collections"]?.arrayValue ?? []).isEmpty {
                report.dropped("collections", because: "Coffer has no collections; items keep their tags")
            }
        }
        return (items, report)
    }

    private static func read(
        _ item: JSONObject, at origin: String, report: inout ImportReport
    ) throws(ImportError) -> (RecordDraft, [ImportedAttachment]) {
        var fileCredentials: [JSONObject] = []
        var draft = RecordDraft(serviceIdentifiers: [], user: "", password: "")
        let extra = (item["extensions"]?.arrayValue ?? []).compactMap(\.objectValue).first { $0["name"]?.stringValue == extensionName } ?? [:]
        draft.name = extra["unnamed"]?.boolValue == true ? "" : item["title"]?.stringValue ?? ""
        report.kept("title", as: "name", value: draft.name)
        let urls = (item["scope"]?.objectValue?["urls"]?.arrayValue ?? []).compactMap(\.stringValue)
        draft.serviceIdentifiers = urls.map { CredentialServiceIdentifier(parsing: $0) }
        for url in urls { report.kept("scope.urls", as: "service identifiers", value: url) }
        draft.tags = (item["tags"]?.arrayValue ?? []).compactMap(\.stringValue)
        draft.created = item["creationAt"]?.int64Value.map { Date(timeIntervalSince1970: Double($0)) }
        draft.modified = item["modifiedAt"]?.int64Value.map { Date(timeIntervalSince1970: Double($0)) }
        var sawLogin = false
        for credential in (item["credentials"]?.arrayValue ?? []).compactMap(\.objectValue) {
            let type = credential["type"]?.stringValue ?? "(none)"
            switch type {
            case "basic-auth" where !sawLogin:
                sawLogin = true
                draft.user = credential["username"]?.objectValue?["value"]?.stringValue ?? ""
                draft.password = credential["password"]?.objectValue?["value"]?.stringValue ?? ""
                report.kept("basic-auth", as: "user and password", value: "1")
            case "passkey" where draft.passkey == nil:
                guard let id = credential["credentialId"]?.stringValue.flatMap(Base64.decodeURL),
                      let rpText = credential["rpId"]?.stringValue, let handle = credential["userHandle"]?.stringValue.flatMap(Base64.decodeURL),
                      let key = credential["key"]?.stringValue.flatMap(Base64.decodeURL)
                else { throw .malformed(location: origin, reason: "a passkey without a valid credentialId, rpId, userHandle or key") }
                guard let rpId = ImportValues.relyingParty(rpText, at: origin, report: &report) else {
                    report.dropped("passkey", because: "its relying party is no domain")
                    continue
                }
                let passkey = Passkey(
                    credentialID: id, relyingPartyIdentifier: rpId, userHandle: handle, userName: credential["username"]?.stringValue ?? "",
                    userDisplayName: credential["userDisplayName"]?.stringValue ?? "", privateKey: key,
                    created: RecordCoding.wholeSeconds(draft.created ?? Date()))
                guard passkey.isWellFormed else {
                    throw .malformed(location: origin, reason: "a passkey without a valid credentialId, rpId, userHandle or key")
                }
                draft.passkey = passkey
                if credential["fido2Extensions"] != nil { report.dropped("passkey.fido2Extensions", because: "Coffer's passkeys have no extensions") }
                report.kept("passkey", as: "passkey", value: "1")
            case "totp" where draft.otp == nil:
                guard let secret = credential["secret"]?.stringValue, let decoded = try? Base32.decode(secret),
                      let algorithm = HMAC.Algorithm(rawValue: (credential["algorithm"]?.stringValue ?? "sha1").uppercased())
                else {
                    report.dropped("totp", because: "an unknown algorithm or a secret that is not base32 (CXF: ignored)")
                    continue
                }
                let code = OneTimeCodeParameters(
                    secret: decoded, algorithm: algorithm, digits: Int(credential["digits"]?.int64Value ?? 6),
                    period: Int(credential["period"]?.int64Value ?? 30), issuer: credential["issuer"]?.stringValue ?? "",
                    account: credential["username"]?.stringValue ?? "")
                draft.otp = code.uri
                report.kept("totp", as: "one-time code", value: "1")
            case "note":
                let content = credential["content"]?.objectValue?["value"]?.stringValue ?? ""
                draft.notes = draft.notes.isEmpty ? content : draft.notes + "\n\n" + content
                report.kept("note", as: "notes", value: content)
            case "custom-fields":
                for field in (credential["fields"]?.arrayValue ?? []).compactMap(\.objectValue) {
                    let hidden = field["fieldType"]?.stringValue == "concealed-string"
                    draft.fields.append(RecordField(name: field["label"]?.stringValue ?? "", value: field["value"]?.stringValue ?? "", hidden: hidden))
                    report.kept("custom-fields", as: hidden ? "hidden fields" : "fields", value: "1")
                }
            case "file":
                fileCredentials.append(credential)
            case let type where Self.cardAndIdentityTypes.contains(type) && (type == "credit-card" ? draft.identity == nil : draft.card == nil):
                Self.read(credential, type: type, into: &draft, report: &report)
            default:
                report.dropped(type, because: sawLogin || draft.passkey != nil || draft.otp != nil
                    ? "Coffer keeps one of each per item" : "a credential type Coffer does not store")
            }
        }
        if let kind = extra["kind"]?.stringValue.flatMap(ItemKind.init(rawValue:)) { draft.kind = kind }
        try Self.readExtension(extra, into: &draft, at: origin)
        if let match = extra["match"]?.stringValue.flatMap(MatchMode.init(rawValue:)) { draft.matchMode = match }
        if let otp = extra["otp"]?.stringValue { draft.otp = otp }
        if let created = extra["passkeyCreated"]?.stringValue.flatMap(UTCTimestamp.parse) { draft.passkey?.created = created }
        draft.passwordReportedUnused = extra["passwordReportedUnused"]?.stringValue.flatMap(UTCTimestamp.parse)
        if let passkey = draft.passkey, extra["passkeyHidden"] != nil || extra["passkeyFormerNames"] != nil {
            var members = passkey.json(omittingDefaults: true).objectValue ?? [:]
            members["hidden"] = extra["passkeyHidden"]
            members["formerNames"] = extra["passkeyFormerNames"]
            guard let read = Passkey(json: .object(members)) else {
                throw .malformed(location: origin, reason: "the coffer-item extension's passkeyHidden or passkeyFormerNames is not as SPEC.md §6.4 writes it")
            }
            draft.passkey = read
        }
        if let member = extra["secretService"] {
            guard let secretService = SecretServiceMember(json: member) else {
                throw .malformed(location: origin, reason: "the coffer-item extension's secretService is not a Secret Service item (SPEC.md §6.5)")
            }
            draft.secretService = secretService
        }
        draft.passwordHistory = (extra["passwordHistory"]?.arrayValue ?? []).compactMap { value in
            guard let entry = value.objectValue, let password = entry["password"]?.stringValue,
                  let replaced = entry["replaced"]?.stringValue.flatMap(UTCTimestamp.parse)
            else { return nil }
            return PasswordHistoryEntry(password: password, replaced: replaced)
        }
        return (draft, try attachments(fileCredentials, contents: extra["files"], at: origin, report: &report))
    }

    /// The `file` credentials as attachments, their bytes from the `coffer-item` extension's
    /// `files` (by `id`) and checked against the credential's `decryptedSize` and
    /// `integrityHash`. A file whose bytes the document does not hold — another exporter's, whose
    /// bytes are in a CXP archive's `documents` folder — is reported dropped.
    private static func attachments(
        _ credentials: [JSONObject], contents: JSONValue?, at origin: String, report: inout ImportReport
    ) throws(ImportError) -> [ImportedAttachment] {
        var stored: [String: JSONObject] = [:]
        for file in (contents?.arrayValue ?? []).compactMap(\.objectValue) {
            if let id = file["id"]?.stringValue { stored[id] = file }
        }
        var result: [ImportedAttachment] = []
        for credential in credentials {
            guard let id = credential["id"]?.stringValue, let fileName = credential["name"]?.stringValue,
                  let size = credential["decryptedSize"]?.uint64Value, let hash = credential["integrityHash"]?.stringValue.flatMap(Base64.decodeURL)
            else { throw .malformed(location: origin, reason: "a file credential without an id, name, decryptedSize or integrityHash") }
            guard let file = stored[id] else {
                report.dropped("file '\(fileName.prefix(40))'", because: "its bytes are not in the document (a CXP archive's documents folder is not read)")
                continue
            }
            guard let name = Attachment.usableName(fileName), !result.contains(where: { $0.name == name }) else {
                report.dropped("file '\(fileName.prefix(40))'", because: "no name an attachment can have (or one taken twice)")
                continue
            }
            guard let content = file["content"]?.stringValue.flatMap(Base64.decode) else {
                throw .malformed(location: origin, reason: "attachment '\(name)' has no base64 content")
            }
            guard UInt64(content.count) == size, SHA256Digest.hash(content) == hash else {
                throw .malformed(location: origin, reason: "attachment '\(name)' does not hold the content its decryptedSize and integrityHash name")
            }
            let mediaType = file["mediaType"]?.stringValue ?? ""
            result.append(ImportedAttachment(
                name: name, mediaType: Attachment.isValidMediaType(mediaType) ? mediaType : Attachment.mediaType(guessedFrom: name), content: content))
            report.kept("file", as: "attachments", value: "1")
        }
        return result
    }
}
