import CofferProvider
import CofferHostKit
import CofferTerminalKit

/// What the git and docker helpers share: finding the vault from their arguments and the
/// environment, unlocking only from a live session (helpers never prompt unless told they
/// may), and finding the records that match a service and user.
struct CredentialHelperSupport {
    let io: IO
    let configuration: CLIConfiguration
    let options: ParsedArguments

    /// Parses `[--container DIR | --group ID] OPERATION`, as a helper is configured.
    static func parse(_ arguments: [String]) throws -> (ParsedArguments, String?) {
        var parsed = try ParsedArguments.parse(arguments, specs: GlobalOptions.all)
        let operation = parsed.positionals.popLast()
        return (parsed, operation)
    }

    var context: CommandContext { CommandContext(arguments: options, io: io, configuration: configuration) }

    /// The vault, unlocked if a `coffer unlock` session is live.
    func vault() throws -> Vault {
        try context.sessionVault(requireUnlocked: false)
    }

    /// Records whose identities match `service` at host level or better under the helper's
    /// protocol `rules`, for `user` if given: what `store` updates and `erase` removes.
    func matchingRecords(
        in vault: Vault, service: CredentialServiceIdentifier, user: String?, rules: ServiceMatchingRules
    ) throws -> [RecordID] {
        let request = ServiceKey(parsing: service)
        let matches = try vault.identityStore.credentialIdentities(for: [service], minimumLevel: .host).filter { ranked in
            (user == nil || ranked.identity.user == user) && rules.admits(ServiceKey(parsing: ranked.identity.serviceIdentifier), for: request)
        }
        return matches.compactMap { try? RecordID(hex: $0.identity.recordIdentifier) }
    }

    /// Stores a credential: updates the password of a matching record, or adds one.
    func save(
        in vault: Vault, service: CredentialServiceIdentifier, user: String, password: String, fields: [RecordField] = [],
        rules: ServiceMatchingRules
    ) throws {
        if let existing = try matchingRecords(in: vault, service: service, user: user, rules: rules).first {
            let record = try vault.record(withID: existing)
            guard record.password != password else { return }
            try vault.updateItem(withID: existing, applying: [.password(password)])
        } else {
            try vault.add(RecordDraft(serviceIdentifiers: [service], user: user, password: password, fields: fields))
        }
    }
}
