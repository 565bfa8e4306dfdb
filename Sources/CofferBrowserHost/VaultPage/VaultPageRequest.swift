import CofferProvider

/// What the vault page asks (SPEC.md §13.7), validated as every request is.
struct VaultPageQuery: Equatable {
    /// Lower-cased; empty lists everything.
    let text: String
    let kind: ItemKind?
    /// Only items carrying this tag (compared as bytes); nil: any.
    let tag: String?
    /// `""`: one's own vault; a team's name; nil: every vault.
    let vault: String?
    let order: VaultPageTable.Order
    let offset: Int
    let limit: Int

    static let maximumLimit = 500
}

/// One item of one vault: `vault` nil is one's own.
struct VaultPageReference: Equatable {
    let id: RecordID
    let vault: String?
}

/// An edit: the item and the revision the page read.
struct VaultPageEdit: Equatable {
    let id: RecordID
    let revision: UInt64
}

extension BrowserRequest {
    static func vaultQuery(_ object: JSONObject) throws(BrowserHostError) -> VaultPageQuery {
        let text = object["query"]?.stringValue ?? ""
        guard text.utf8.count <= 256 else { throw .badRequest("query too long") }
        var kind: ItemKind?
        if let name = object["kind"]?.stringValue, !name.isEmpty {
            guard let named = ItemKind(rawValue: name) else { throw .badRequest("kind is not an item kind") }
            kind = named
        }
        var tag: String?
        switch object["tag"] {
        case nil, .null?: break
        case .string(let name)? where name.utf8.count <= ItemDetails.maximumTagLength: tag = name
        default: throw .badRequest("tag is a tag's name")
        }
        guard let order = VaultPageTable.Order(rawValue: object["sort"]?.stringValue ?? "name") else {
            throw .badRequest("sort must be name, lastUsed or modified")
        }
        let offset = object["offset"].map { $0.int64Value.map(Int.init) } ?? 0, limit = object["limit"].map { $0.int64Value.map(Int.init) } ?? 100
        guard let offset, offset >= 0, let limit, (1...VaultPageQuery.maximumLimit).contains(limit) else {
            throw .badRequest("offset must be 0 or more, limit 1 to \(VaultPageQuery.maximumLimit)")
        }
        return VaultPageQuery(text: text.lowercased(), kind: kind, tag: tag, vault: try vaultName(object), order: order, offset: offset, limit: limit)
    }

    /// `revision`: the revision the page read (a save over another is a conflict).
    static func revision(_ object: JSONObject) throws(BrowserHostError) -> UInt64 {
        guard let revision = object["revision"]?.uint64Value else { throw .badRequest("revision is the item's revision the page read") }
        return revision
    }

    /// `vault`: absent or null for every vault (a listing) or one's own (an item); a string names a team.
    static func vaultName(_ object: JSONObject) throws(BrowserHostError) -> String? {
        switch object["vault"] {
        case nil, .null?: return nil
        case .string(let name)? where name.utf8.count <= 256: return name
        default: throw .badRequest("vault is a team's name")
        }
    }
}
