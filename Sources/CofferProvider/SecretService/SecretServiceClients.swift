import CofferStore
import CofferFormat
/// Which programs may read Secret Service items they did not store (SPEC.md §17.4): an ordinary
/// note named "Secret Service clients", tagged `secret-service-clients`, one field per approved
/// executable — sealed and authenticated like every item, so no other process of the user can
/// slip itself in (a file in `~/.local/state` could be written by any of them), synced and backed
/// up with the vault, and visible to the person (`coffer show "Secret Service clients"`).
public enum SecretServiceClients {
    public static let itemName = "Secret Service clients"
    public static let tag = "secret-service-clients"
    static let allowed = "always"

    /// The executables a person allowed always, in the order they were allowed.
    public static func approved(in vault: Vault) throws -> [String] {
        guard let record = try record(in: vault) else { return [] }
        return record.fields.filter { $0.value == allowed }.map(\.name)
    }

    /// Remembers `executable` as allowed always (once).
    public static func approve(_ executable: String, in vault: Vault) throws {
        if let existing = try record(in: vault) {
            try vault.updateRecord(withID: existing.id) { record in
                guard !record.fields.contains(where: { $0.name == executable }) else { return }
                record.fields.append(RecordField(name: executable, value: allowed))
            }
        } else {
            try vault.add([RecordDraft(
                serviceIdentifiers: [], user: "", password: "",
                notes: "Programs allowed to read Secret Service items they did not store. Remove a line with 'coffer secret-service clients --revoke PATH'.",
                fields: [RecordField(name: executable, value: allowed)], name: itemName, kind: .note, tags: [tag])])
        }
    }

    /// Forgets `executable`; whether it was allowed.
    @discardableResult
    public static func revoke(_ executable: String, in vault: Vault) throws -> Bool {
        guard let existing = try record(in: vault), existing.fields.contains(where: { $0.name == executable }) else { return false }
        try vault.updateRecord(withID: existing.id) { record in record.fields.removeAll { $0.name == executable } }
        return true
    }

    /// The note, found by its name and tag (a person's own note of that name is not it).
    static func record(in vault: Vault) throws -> Record? {
        for item in try CredentialIdentityStore(vault: vault).items(named: itemName) where item.kind == .note {
            let record = try vault.record(withID: item.recordID)
            if record.tags.contains(tag) { return record }
        }
        return nil
    }
}
