import CofferModel
import CofferSupport
import CofferCrypto
import FoundationEssentials

/// The intent a writer records before touching records (SPEC.md §7.5): enough to finish or
/// ignore the transaction after a crash, without the vault key.
public struct IndexJournal: Equatable, Sendable {
    public struct Change: Equatable, Sendable {
        public var recordID: RecordID
        /// Hash of the record file before the transaction; `nil` if it did not exist.
        public var oldHash: String?
        /// Hash after; `nil` for a deletion.
        public var newHash: String?
        public var revision: UInt64
        /// The record's index entries after the transaction: its identities and item entry.
        /// Not written for an add (no `oldHash`): recovery removes an unfinished add, never
        /// applies it (SPEC.md §7.5), and an import's journal is half its entries otherwise.
        public var entries: [BucketEntry]

        package init(recordID: RecordID, oldHash: String? = nil, newHash: String? = nil, revision: UInt64, entries: [BucketEntry]) {
            self.recordID = recordID
            self.oldHash = oldHash
            self.newHash = newHash
            self.revision = revision
            self.entries = entries
        }
    }

    /// The generation the manifest will have once the transaction commits.
    public var generation: UInt64
    public var changes: [Change]

    public func encoded() throws(FormatError) -> [UInt8] {
        JSONValue.object([
            "generation": .integer(generation),
            "changes": .array(changes.map { change in
                var members: JSONObject = [
                    "recordID": .string(change.recordID.hex),
                    "oldHash": change.oldHash.map(JSONValue.string) ?? .null,
                    "newHash": change.newHash.map(JSONValue.string) ?? .null,
                    "revision": .integer(change.revision),
                ]
                guard change.oldHash != nil else { return .object(members) }
                members["identities"] = .array(change.entries.compactMap { entry in
                    if case .identity(let identity) = entry { identity.journalJSON } else { nil }
                })
                members["item"] = change.entries.lazy.compactMap { entry in
                    if case .item(let item) = entry { item.journalJSON } else { nil }
                }.first ?? .null
                let attributes = change.entries.compactMap { entry -> JSONValue? in
                    guard case .attribute(let attribute) = entry else { return nil }
                    return .object(["digest": .string(attribute.digest), "collection": .string(attribute.collection)])
                }
                if !attributes.isEmpty { members["attributes"] = .array(attributes) }
                return .object(members)
            }),
        ]).canonicalBytes
    }

    /// - Parameter key: the parsed service of an identity (the journal stores only its identifier
    ///   and site; parsing needs libidn2 and libpsl, which the format layer does not call).
    /// - Throws: `FormatError.invalidDocument("journal")` for anything but a well-formed journal.
    public static func decode(
        _ bytes: [UInt8], key: (CredentialServiceIdentifier, _ site: String) -> ServiceKey = { .unparsed(site: $1) }
    ) throws(FormatError) -> IndexJournal {
        guard let document = try? JSONValue.parse(bytes), let members = document.objectValue,
              let generation = members["generation"]?.uint64Value, let changes = members["changes"]?.arrayValue
        else { throw .invalidDocument("journal") }
        var decoded: [Change] = []
        decoded.reserveCapacity(changes.count)
        for change in changes {
            guard let members = change.objectValue,
                  let recordID = members["recordID"]?.stringValue.flatMap({ try? RecordID(hex: $0) }),
                  let oldHash = optionalString(members["oldHash"]), let newHash = optionalString(members["newHash"]),
                  let revision = members["revision"]?.uint64Value,
                  let identityValues = members["identities"].map({ $0.arrayValue }) ?? []  // absent for an add
            else { throw .invalidDocument("journal") }
            var entries = identityValues.compactMap { IdentityEntry(journalJSON: $0, key: key) }.map(BucketEntry.identity)
            guard entries.count == identityValues.count else { throw .invalidDocument("journal") }
            switch members["item"] {
            case nil, .null?: break  // a journal of format 0.x
            case let value?:
                guard let item = ItemEntry(journalJSON: value, recordID: recordID) else { throw .invalidDocument("journal") }
                entries.append(.item(item))
            }
            let attributeValues = members["attributes"].map { $0.arrayValue } ?? []  // absent: none
            guard let attributeValues else { throw .invalidDocument("journal") }
            for value in attributeValues {
                guard let object = value.objectValue, let digest = object["digest"]?.stringValue,
                      let collection = object["collection"]?.stringValue
                else { throw .invalidDocument("journal") }
                entries.append(.attribute(AttributeEntry(recordID: recordID, digest: digest, collection: collection)))
            }
            decoded.append(Change(recordID: recordID, oldHash: oldHash, newHash: newHash, revision: revision, entries: entries))
        }
        return IndexJournal(generation: generation, changes: decoded)
    }

    /// A hash member: absent or `null` is `.some(nil)`, a string is itself, anything else `nil`.
    private static func optionalString(_ value: JSONValue?) -> String?? {
        switch value {
        case nil, .null?: .some(nil)
        case .string(let text)?: .some(text)
        default: nil
        }
    }

    package init(generation: UInt64, changes: [Change]) {
        self.generation = generation
        self.changes = changes
    }
}

extension IdentityEntry {
    /// `{"kind", "match", "name", "rank", "recordID", "serviceIdentifier": {...}, "site", "user"}`
    /// in the journal; `kind` and `name` are omitted at their defaults (`password`, empty).
    var journalJSON: JSONValue {
        var members: JSONObject = [
            "recordID": .string(recordID.hex), "serviceIdentifier": serviceIdentifier.json,
            "user": .string(user), "rank": .integer(rank), "site": .string(site), "match": .string(mode.rawValue),
        ]
        if kind != .password { members["kind"] = .string(kind.rawValue) }
        if !name.isEmpty { members["name"] = .string(name) }
        if kind == .passkey {
            members["credentialId"] = .string(Base64.encodeURL(credentialID))
            members["userHandle"] = .string(Base64.encodeURL(userHandle))
        }
        return .object(members)
    }

    /// An absent `match` (a journal of format 0.x) is `host`.
    init?(journalJSON: JSONValue, key: (CredentialServiceIdentifier, String) -> ServiceKey) {
        guard let members = journalJSON.objectValue,
              let recordID = members["recordID"]?.stringValue.flatMap({ try? RecordID(hex: $0) }),
              let service = members["serviceIdentifier"].flatMap(CredentialServiceIdentifier.init(json:)),
              let user = members["user"]?.stringValue, let rank = members["rank"]?.int64Value,
              let site = members["site"]?.stringValue
        else { return nil }
        let mode: MatchMode
        switch members["match"] {
        case nil: mode = .host
        case .string(let name)?:
            guard let named = MatchMode(rawValue: name) else { return nil }
            mode = named
        default: return nil
        }
        let kind: IdentityKind, name: String
        switch (members["kind"], members["name"]) {
        case (nil, nil): (kind, name) = (.password, "")
        case (let kindValue, let nameValue):
            guard let parsedKind = kindValue.map({ $0.stringValue.flatMap(IdentityKind.init(rawValue:)) }) ?? .password,
                  let parsedName = nameValue.map({ $0.stringValue }) ?? ""
            else { return nil }
            (kind, name) = (parsedKind, parsedName)
        }
        var credentialID: [UInt8] = [], userHandle: [UInt8] = []
        if kind == .passkey {
            guard let id = members["credentialId"]?.stringValue.flatMap(Base64.decodeURL),
                  let handle = members["userHandle"]?.stringValue.flatMap(Base64.decodeURL)
            else { return nil }
            (credentialID, userHandle) = (id, handle)
        }
        self.init(
            recordID: recordID, serviceIdentifier: service, user: user, rank: rank, mode: mode, key: key(service, site), kind: kind,
            name: name, credentialID: credentialID, userHandle: userHandle)
    }
}

extension ItemEntry {
    /// `{"kind", "listed", "name", "service", "user"}` in the journal, and `"modified"` (Unix
    /// seconds) and `"tags"` when they are not 0 and empty (SPEC.md §7.5).
    var journalJSON: JSONValue {
        var members: [String: JSONValue] = [
            "kind": .string(kind.rawValue), "listed": .bool(listed), "name": .string(name), "service": .string(service),
            "user": .string(user),
        ]
        if details.modified != 0 { members["modified"] = .integer(details.modified) }
        if !details.tags.isEmpty { members["tags"] = .array(details.tags.map(JSONValue.string)) }
        return .object(JSONObject(members))
    }

    init?(journalJSON: JSONValue, recordID: RecordID) {
        guard let members = journalJSON.objectValue,
              let kind = members["kind"]?.stringValue.flatMap(ItemKind.init(rawValue:)),
              case .bool(let listed)? = members["listed"], let name = members["name"]?.stringValue,
              let service = members["service"]?.stringValue, let user = members["user"]?.stringValue
        else { return nil }
        let tags = members["tags"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard tags.count == members["tags"]?.arrayValue?.count ?? 0 else { return nil }
        let modified = members["modified"].map { $0.int64Value } ?? 0
        guard let modified else { return nil }
        self.init(recordID: recordID, kind: kind, listed: listed, name: name, user: user, service: service, details: ItemDetails(modified: modified, tags: tags))
    }
}
