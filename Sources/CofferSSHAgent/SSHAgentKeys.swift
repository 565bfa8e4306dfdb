import CofferProvider
import CofferHostKit
import FoundationEssentials

/// The keys the agent serves: the ssh-key items of the vault and of the teams it opens (SPEC.md
/// §6.3, §14, §16.6: a team's shared deploy key, its comment `TEAM:NAME`). Listing reads the
/// identity stores, so it works while locked — public keys only, as suggestions are.
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
        /// The vault holding the item: one's own, or a team's.
        public let vaultID: VaultID
    }

    /// Every Ed25519 key of the vault, then of its teams, with its item's name as the comment;
    /// a vault whose identity store cannot be read contributes none.
    ///
    /// A listing is no use of the keys: every ssh connection asks for it (a cron job's `git
    /// fetch` too), so it reads the identity stores as they are readable while locked, and asking
    /// for the list never pushes back an unlock session's idle timeout (SPEC.md §8.4). Only where
    /// suggestions are off on this device does it take a live session's key to read a store, and
    /// then without re-arming it.
    func identities() -> [Listed] {
        guard let vault = try? session.openVaultWithoutUse() else { return [] }
        return (try? cachedKeys(in: vault).keys) ?? []
    }

    /// The keys of the last listing while no index has changed since (their change tokens):
    /// a listing of a 10,000-item vault costs ~10 ms, a token one manifest read.
    private var cache: (tokens: [VaultID: [UInt8]], keys: [Listed])?

    /// The keys, and the vaults opened for this request (never a vault kept from an earlier
    /// one: a vault unlocked then stays unlocked in memory, and `coffer lock` must count).
    private func cachedKeys(in personal: Vault) throws -> (keys: [Listed], vaults: [VaultID: Vault]) {
        let teams = session.teams(of: personal)
        let vaults: [(name: String?, vault: Vault)] = [(nil, personal)] + teams.map { ($0.name, $0.vault) }
        var tokens: [VaultID: [UInt8]] = [:]
        for (_, vault) in vaults { tokens[vault.vaultID] = (try? vault.identityStore.changeToken()) ?? [] }
        let opened = Dictionary(vaults.map { ($0.vault.vaultID, $0.vault) }, uniquingKeysWith: { first, _ in first })
        if let cache, cache.tokens == tokens { return (cache.keys, opened) }
        let unlock = { (vault: Vault) in _ = self.session.unlockFromSession(vault, asUse: false) }
        let keys = try Self.listedKeys(in: personal, unlock: unlock) + Self.teamKeys(teams, unlock: unlock).keys
        // A store unreadable without unlocking has no token to tell a change by: not kept.
        cache = tokens.values.contains([]) ? nil : (tokens, keys)
        return (keys, opened)
    }

    /// The ssh-key items of `vault`, from its identity store as it reads while locked; where the
    /// store is off on this device and the vault locked, after `unlock(vault)` (a session).
    public static func listedKeys(in vault: Vault, team: String? = nil, unlock: (Vault) -> Void = { _ in }) throws -> [Listed] {
        let store = vault.identityStore
        let listing: IdentityListing
        do {
            listing = try store.identityListing()
        } catch {
            guard case .storeDisabled = error, !vault.isUnlocked else { throw error }
            unlock(vault)
            listing = try store.identityListing()
        }
        return listing.rows.filter { $0.kind == .sshKey }.compactMap { row in
            guard let key = SSHPublicKey(authorizedKeysLine: listing.identity(row).serviceIdentifier.identifier) else { return nil }
            return Listed(key: key, comment: (team.map { $0 + ":" } ?? "") + listing.name(row), recordID: row.recordID, vaultID: vault.vaultID)
        }
    }

    /// The keys of `teams`, each commented `TEAM:NAME`, in the order given; `unreadable` names
    /// the teams whose identity store cannot be read on this device (locked, suggestions off).
    public static func teamKeys(_ teams: [(name: String, vault: Vault)], unlock: (Vault) -> Void) -> (keys: [Listed], unreadable: [String]) {
        var keys: [Listed] = [], unreadable: [String] = []
        for team in teams {
            if let listed = try? listedKeys(in: team.vault, team: team.name, unlock: unlock) { keys += listed } else { unreadable.append(team.name) }
        }
        return (keys, unreadable)
    }

    /// The signature of `data` with the key whose blob is `blob`.
    func sign(blob: [UInt8], data: [UInt8]) throws -> [UInt8] {
        let (keys, vaults) = try cachedKeys(in: openVault())
        guard let listed = keys.first(where: { $0.key.blob == blob }), let vault = vaults[listed.vaultID] else { throw SSHAgentError.unknownKey }
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
