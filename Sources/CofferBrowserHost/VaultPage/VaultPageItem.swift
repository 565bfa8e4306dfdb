import CofferProvider
import CofferHostKit
import CofferAudit

/// An item as the vault page shows it and sends it back (SPEC.md §13.7). Shown: every member
/// `coffer show` has — never a passkey's key. Sent: the members as a person typed them, read by
/// the library's rules (`ItemRules`, `ItemContent.memberLines`), the very reading `coffer edit`'s
/// text form gets: one implementation of what an item may hold.
enum VaultPageItem {
    /// The page's limits on what it sends: the answer to a request is at most 1 MiB, and no
    /// person types more than this into one item.
    static let maximumText = 64 * 1024
    static let maximumList = 256

    /// The members of `record` of vault `vault` (nil: one's own), with what the audit finds of it.
    static func json(_ record: Record, vault: String?, pages: ChangePasswordPages) -> JSONObject {
        let content = ItemContent(record)
        var item: JSONObject = [
            "recordIdentifier": .string(record.id.hex), "vault": vault.map { .string($0) } ?? .null,
            "revision": .integer(record.revision), "created": .string(UTCTimestamp.format(record.created)),
            "modified": .string(UTCTimestamp.format(record.modified)),
            "kind": .string(record.kind.rawValue), "name": .string(record.name), "title": .string(record.title),
            "user": .string(record.user), "password": .string(record.password),
            "sites": .array(record.serviceIdentifiers.map { .string($0.identifier) }),
            "tags": .array(record.tags.map { .string($0) }), "match": .string(record.matchMode.rawValue),
            "fields": .array(record.fields.map { .object(["name": .string($0.name), "value": .string($0.value), "hidden": .bool($0.hidden)]) }),
            "notes": .string(record.notes), "otp": record.otp.map { .string($0) } ?? .null,
            "members": .array(memberLines(of: record.kind).map { line in
                .object(["key": .string(line.key), "masked": .bool(line.masked), "values": .array(line.values(content).map { .string($0) })])
            }),
            "passwordHistory": .array(record.passwordHistory.map {
                .object(["password": .string($0.password), "replaced": .string(UTCTimestamp.format($0.replaced))])
            }),
            "attachments": .array(record.attachments.map {
                .object(["name": .string($0.name), "mediaType": .string($0.mediaType), "size": .integer($0.size)])
            }),
            "findings": .array(VaultAudit.findings(of: record, pages: pages).map {
                .object(["kind": .string($0.kind.rawValue), "detail": .string($0.detail)])
            }),
            "changePasswordURL": VaultAudit.changePasswordURL(for: record, pages: pages).map { .string($0) } ?? .null,
        ]
        if let passkey = record.passkey {  // where and for whom, never the key
            item["passkey"] = [
                "relyingParty": .string(passkey.relyingPartyIdentifier), "user": .string(passkey.userName),
                "displayName": .string(passkey.userDisplayName), "created": .string(UTCTimestamp.format(passkey.created)),
            ]
        }
        if let secret = record.secretService {
            item["secretService"] = [
                "collection": .string(secret.collection),
                "attributes": .object(JSONObject(secret.attributes.mapValues { .string($0) })),
            ]
        }
        return item
    }

    /// The card or identity member lines of `kind` (none for the other kinds): the form's rows.
    static func memberLines(of kind: ItemKind) -> [ItemMemberLine] {
        ItemContent.memberLines.filter { $0.kind == kind }
    }

    /// What the page's form may hold, from the library's tables: the kinds, the match modes, and
    /// each kind's member lines.
    static var form: JSONObject {
        [
            "kinds": .array(ItemKind.allCases.map { .string($0.rawValue) }),
            "matchModes": .array(MatchMode.allCases.map { .string($0.rawValue) }),
            "members": .object(JSONObject(Dictionary(uniqueKeysWithValues: [ItemKind.card, .identity].map { kind in
                (kind.rawValue, JSONValue.array(memberLines(of: kind).map { .object(["key": .string($0.key), "masked": .bool($0.masked)]) }))
            }))),
        ]
    }

    /// The item the page sent, read as `coffer edit` reads a person's text: every member through
    /// `ItemRules`, card and identity members by their lines. A member of the wrong type or over
    /// the limits is a bad request; one a rule refuses is `invalid`, naming the member.
    static func content(_ object: JSONObject) throws(BrowserHostError) -> ItemContent {
        func text(_ name: String, limit: Int = maximumText) throws(BrowserHostError) -> String {
            guard let value = object[name] else { return "" }
            guard let string = value.stringValue else { throw .badRequest("item.\(name) is not a string") }
            return try checked(string, "item.\(name)", limit: limit)
        }
        func texts(_ value: JSONValue?, _ name: String) throws(BrowserHostError) -> [String] {
            guard let value else { return [] }
            guard let list = value.arrayValue, list.count <= maximumList else { throw .badRequest("item.\(name) is not a list of at most \(maximumList)") }
            var strings: [String] = []
            for element in list {
                guard let string = element.stringValue else { throw .badRequest("item.\(name) holds a non-string") }
                strings.append(try checked(string, "item.\(name)", limit: 4096))
            }
            return strings
        }
        let kind = try text("kind", limit: 32), name = try text("name", limit: 1024), user = try text("user", limit: ItemRules.maximumUserLength)
        let password = try text("password", limit: BrowserRequest.maximumSecretLength), notes = try text("notes")
        let sites = try texts(object["sites"], "sites"), tags = try texts(object["tags"], "tags")
        let match = object["match"] == nil ? nil : try text("match", limit: 16), otp = try text("otp", limit: 4096)
        let fields = try fields(object["fields"]), members = try memberTexts(object["members"])
        var content: ItemContent
        do throws(ItemRuleViolation) {
            content = ItemContent(kind: try ItemRules.kind(kind), name: name, user: user, password: password, fields: fields, notes: notes)
            for site in sites where !site.trimmingSpaces().isEmpty {
                let service = try ItemRules.service(site)
                if !content.services.contains(service) { content.services.append(service) }
            }
            content.tags = ItemRules.tags(tags.joined(separator: ","))
            if let match { content.matchMode = try ItemRules.matchMode(match) }
            content.otp = try ItemRules.oneTimeCode(otp, account: user.isEmpty ? name : user)
        } catch {
            throw .invalid(member: error.member.rawValue, error.reason)
        }
        let lines = memberLines(of: content.kind)
        for (key, values) in members {
            guard let line = lines.first(where: { $0.key == key }) else {
                throw .invalid(member: key, "'\(key.prefix(40))' is no member of a \(content.kind.rawValue)")
            }
            for text in values where !text.trimmingSpaces().isEmpty {
                do throws(ItemRuleViolation) { try line.read(&content, text) } catch { throw .invalid(member: key, error.reason) }
            }
        }
        do throws(ItemRuleViolation) { try content.check() } catch { throw .invalid(member: error.member.rawValue, error.reason) }
        return content
    }

    private static func fields(_ value: JSONValue?) throws(BrowserHostError) -> [RecordField] {
        guard let value else { return [] }
        guard let list = value.arrayValue, list.count <= maximumList else { throw .badRequest("item.fields is not a list of at most \(maximumList)") }
        var fields: [RecordField] = []
        for element in list {
            guard let field = element.objectValue, let name = field["name"]?.stringValue, let value = field["value"]?.stringValue else {
                throw .badRequest("a field is {name, value, hidden}")
            }
            fields.append(RecordField(
                name: try checked(name, "a field's name", limit: 1024), value: try checked(value, "a field's value", limit: maximumText),
                hidden: field["hidden"]?.boolValue == true))
        }
        return fields
    }

    /// `members`: each line's key to its text (`address` to a list of lines), as the CLI's text
    /// form reads `key: value` lines, in the order sent.
    private static func memberTexts(_ value: JSONValue?) throws(BrowserHostError) -> [(key: String, values: [String])] {
        guard let value else { return [] }
        guard let members = value.objectValue else { throw .badRequest("item.members is not an object") }
        var texts: [(key: String, values: [String])] = []
        for (key, value) in members {
            let values: [String]
            if let single = value.stringValue {
                values = [single]
            } else if let list = value.arrayValue, list.count <= IdentityMember.maximumAddressLines, list.allSatisfy({ $0.stringValue != nil }) {
                values = list.compactMap(\.stringValue)
            } else {
                throw .badRequest("item.members.\(key.prefix(40)) is not a string or a list of at most \(IdentityMember.maximumAddressLines) strings")
            }
            var checkedValues: [String] = []
            for text in values { checkedValues.append(try checked(text, "item.members.\(key.prefix(40))", limit: 1024)) }
            texts.append((key, checkedValues))
        }
        return texts
    }

    private static func checked(_ value: String, _ name: String, limit: Int) throws(BrowserHostError) -> String {
        guard value.utf8.count <= limit else { throw .badRequest("\(name) is longer than \(limit) bytes") }
        guard !value.utf8.contains(0) else { throw .badRequest("\(name) holds NUL") }
        return value
    }
}
