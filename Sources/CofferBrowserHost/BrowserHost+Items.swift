import CofferProvider
import CofferHostKit

/// Cards and identities for a page's payment and address fields (SPEC.md §13.3, §6.8): the
/// list a field offers is their names, read while locked as suggestions are; the members of the
/// one a person chose leave only for an `https` page (or `http://localhost`), through pinentry
/// when locked — as a login's password does.
extension BrowserHost {
    func items(of kind: ItemKind, in vault: Vault) throws -> JSONObject {
        let listing = try readable(vault) { try $0.identityListing() }
        let rows = listing.rows.filter { $0.entry == .item && $0.kind == kind }
            .sorted { listing.name($0).lowercased() < listing.name($1).lowercased() }
        return [
            "items": .array(rows.prefix(Self.maximumSuggestions).map { row in
                .object(["recordIdentifier": .string(row.recordID.hex), "name": .string(listing.name(row)),
                         "user": .string(listing.identity(row).user)])
            }),
            "locked": .bool(!session.isUnlocked(vault)),
        ]
    }

    func fillItem(_ id: RecordID, of kind: ItemKind, for origin: BrowserOrigin, in vault: Vault) throws -> JSONObject {
        guard origin.isSecureContext else {
            throw BrowserHostError.forbidden("a \(kind.rawValue) is filled only into an https page")
        }
        try unlock(vault, reason: "to fill \(kind == .card ? "a card" : "an address") on \(origin.host)")
        guard let record = try existing(id, in: vault), record.kind == kind else { throw BrowserHostError.notFound }
        var answer: JSONObject = ["recordIdentifier": .string(id.hex), "name": .string(record.name)]
        if kind == .card {
            answer["card"] = (record.card ?? CardMember()).json(omittingDefaults: true)
        } else {
            let identity = record.identity ?? IdentityMember()
            answer["identity"] = identity.json(omittingDefaults: true)
            answer["user"] = .string(record.user)
            // A country as a form's select or text field may want it.
            if let name = ItemRules.countryName(identity.country) { answer["countryName"] = .string(name) }
            if let alpha3 = ItemRules.countryAlpha3(identity.country) { answer["countryAlpha3"] = .string(alpha3) }
        }
        return answer
    }

    /// Keeps a card a person submitted and chose to save (the extension sends its code only when
    /// they ticked it): named by its brand and last digits; `exists` when a card of that number is
    /// kept already. Only from an https page; pinentry when locked.
    func saveCard(_ card: CardMember, from origin: BrowserOrigin, in vault: Vault) throws -> JSONObject {
        guard origin.isSecureContext else { throw BrowserHostError.forbidden("a card is saved only from an https page") }
        try unlock(vault, reason: "to save a card from \(origin.host)")
        let listing = try vault.identityStore.identityListing()
        for row in listing.rows where row.entry == .item && row.kind == .card {
            let kept = try existing(row.recordID, in: vault)?.card?.number.filter(\.isNumber)
            if kept == card.number { throw BrowserHostError.exists }
        }
        var named = card
        if named.brand.isEmpty { named.brand = CardMember.brand(ofNumber: card.number) ?? "" }
        let record = try vault.addItem(ItemContent(kind: .card, name: "\(named.brand.isEmpty ? "Card" : named.brand) •••• \(card.lastDigits)", card: named))
        return ["recordIdentifier": .string(record.id.hex), "name": .string(record.name)]
    }

    /// Every item whose name, user or site holds `query` (case-insensitive), one row each, by
    /// name: a login by its identities, any other kind by its item entry. Names only.
    func textItems(matching query: String, in vault: Vault) throws -> JSONObject {
        let listing = try readable(vault) { try $0.identityListing() }
        var seen = Set<RecordID>(), items: [(name: String, kind: ItemKind, user: String)] = [], ids: [RecordID] = []
        for row in listing.rows where row.entry == .item || row.entry == .password {
            let identity = listing.identity(row)
            let name = listing.name(row).isEmpty ? identity.serviceIdentifier.identifier : listing.name(row)
            guard query.isEmpty || [name, identity.user, identity.serviceIdentifier.identifier].contains(where: { $0.lowercased().contains(query) }),
                  seen.insert(row.recordID).inserted
            else { continue }
            items.append((name, row.kind, identity.user))
            ids.append(row.recordID)
        }
        let order = items.indices.sorted { items[$0].name.lowercased() < items[$1].name.lowercased() }
        return [
            "items": .array(order.prefix(Self.maximumSuggestions).map { index in
                .object(["recordIdentifier": .string(ids[index].hex), "name": .string(items[index].name),
                         "kind": .string(items[index].kind.rawValue), "user": .string(items[index].user)])
            }),
            "locked": .bool(!session.isUnlocked(vault)),
        ]
    }

    /// The text of `member` of item `id`, through the provider's text-insertion entry point
    /// (the person chose it in the chooser; pinentry when locked).
    func insertText(_ member: String, of id: RecordID, in vault: Vault) throws -> JSONObject {
        let provider = session.provider(for: vault)
        provider.extensionContext.reset()
        provider.prepareInterfaceForUserChoosingTextToInsert(in: id) { texts in texts.first { $0.member == member } }
        switch provider.extensionContext.outcome {
        case .completedTextToInsert(let text)?: return ["text": .string(text)]
        case .cancelled(let error)? where error.code == .userCanceled && !vault.isUnlocked: throw BrowserHostError.from(error)
        case .cancelled(let error)? where error.code == .userCanceled: throw BrowserHostError.notFound  // no such member
        case .cancelled(let error)?: throw BrowserHostError.from(error)
        default: throw BrowserHostError.failed("the provider did not answer")
        }
    }

    /// Record `id`, or nil when there is none.
    func existing(_ id: RecordID, in vault: Vault) throws -> Record? {
        do {
            return try vault.record(withID: id)
        } catch {
            if case .recordNotFound = error { return nil }
            throw error
        }
    }
}
