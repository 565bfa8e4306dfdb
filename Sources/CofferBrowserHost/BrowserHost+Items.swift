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
        guard origin.isSecure || origin.host == "localhost" else {
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

    /// Record `id`, or nil when there is none.
    private func existing(_ id: RecordID, in vault: Vault) throws -> Record? {
        do {
            return try vault.record(withID: id)
        } catch {
            if case .recordNotFound = error { return nil }
            throw error
        }
    }
}
