import FoundationEssentials

/// The keys the agent serves: the vault's ssh-key items (SPEC.md §6.3, §14). Listing reads the
/// identity store, so it works while the vault is locked — public keys only, as suggestions are.
/// Signing needs the vault unlocked: by a keyring session (`coffer unlock`), else through
/// pinentry, whose unlock starts a session so `coffer lock` locks the agent too. No private key
/// is kept between requests: each signature reads the item, decodes the key into guarded
/// memory, signs and lets it go.
public final class SSHAgentKeys {
    /// The door: container, sessions and pinentry; `interaction` `nil` never asks (locked means
    /// the signature is refused).
    let session: HostSession
    var interaction: UserInteraction? { session.interaction }

    public init(session: HostSession) {
        self.session = session
    }

    public struct Listed: Sendable {
        public let key: SSHPublicKey
        public let comment: String
        public let recordID: RecordID
    }

    /// Every Ed25519 key of the vault with its item's name as the comment; empty when the
    /// identity store cannot be read (disabled on this device while locked).
    func identities() -> [Listed] {
        guard let vault = try? openVault() else { return [] }
        return (try? cachedKeys(in: vault)) ?? []
    }

    /// The keys of the last listing while the index has not changed since (its change token):
    /// a listing of a 10,000-item vault costs ~10 ms, the token one manifest read.
    private var cache: (vaultID: VaultID, token: [UInt8], keys: [Listed])?

    private func cachedKeys(in vault: Vault) throws -> [Listed] {
        let token = try vault.identityStore.changeToken() ?? []
        if let cache, cache.vaultID == vault.vaultID, cache.token == token { return cache.keys }
        let keys = try Self.listedKeys(in: vault)
        cache = (vault.vaultID, token, keys)
        return keys
    }

    public static func listedKeys(in vault: Vault) throws -> [Listed] {
        let listing = try vault.identityStore.identityListing()
        return listing.rows.filter { $0.kind == .sshKey }.compactMap { row in
            guard let key = SSHPublicKey(authorizedKeysLine: listing.identity(row).serviceIdentifier.identifier) else { return nil }
            return Listed(key: key, comment: listing.name(row), recordID: row.recordID)
        }
    }

    /// The signature of `data` with the key whose blob is `blob`.
    func sign(blob: [UInt8], data: [UInt8]) throws -> [UInt8] {
        let vault = try openVault()
        guard let listed = try cachedKeys(in: vault).first(where: { $0.key.blob == blob }) else { throw SSHAgentError.unknownKey }
        try unlock(vault, reason: "to sign with the SSH key '\(listed.comment)'")
        let record = try vault.record(withID: listed.recordID)
        guard let text = record.sshPrivateKeyText else { throw SSHAgentError.noPrivateKey }
        let key = try OpenSSHPrivateKey.decode(text).key
        guard key.publicKey == listed.key.ed25519Key else { throw SSHAgentError.noPrivateKey }
        if record.sshRequiresConfirmation {
            let question = "Allow the SSH key '\(record.name)' (\(listed.key.fingerprint)) to sign? The agent was asked to by a program of yours."
            guard let interaction, try interaction.requestConfirmation(question) else { throw SSHAgentError.declined }
        }
        return try key.sign(data)
    }

    private func openVault() throws -> Vault {
        try session.openVault()
    }

    /// Unlocks through pinentry unless a session already did (`HostSession`'s policy).
    private func unlock(_ vault: Vault, reason: String) throws {
        switch try session.unlock(vault, reason: reason) {
        case .unlocked: return
        case .cancelled: throw SSHAgentError.declined
        case .noInteraction, .wrongPassword: throw SSHAgentError.locked
        }
    }
}

/// Why a signature was refused; the client sees only `SSH_AGENT_FAILURE`, the agent's log the reason.
public enum SSHAgentError: Error, CustomStringConvertible {
    case unknownKey, noPrivateKey, locked, declined

    public var description: String {
        switch self {
        case .unknownKey: "no ssh-key item has that public key"
        case .noPrivateKey: "the item's privateKey field is missing or is another key"
        case .locked: "the vault is locked and could not be unlocked"
        case .declined: "declined"
        }
    }
}
