import CofferProvider
import FoundationEssentials

/// The one door every host enters by (the CLI, the git and docker helpers, the browser host, the
/// SSH agent, the pickers, `run`/`inject`, the Secret Service): which container, how a vault is
/// opened, and — through its `UnlockPolicy`, the one the provider is given too — how a locked
/// one is unlocked (SPEC.md §8.3–§8.4). A rule like "locked means locked" lives there once, so
/// a new host cannot forget it.
public final class HostSession {
    public let container: GroupContainer
    public let configuration: VaultConfiguration
    /// How this host unlocks: sessions, a team's owner, its interaction, three attempts.
    public let unlockPolicy: UnlockPolicy
    /// Unlock sessions shared by this user's processes; `nil`: this host never uses them.
    public var sessions: KeyringSessions? { unlockPolicy.sessions }
    /// How this host asks a person (pinentry, a terminal, a script); `nil`: it never asks.
    public var interaction: UserInteraction? { unlockPolicy.interaction }
    /// The idle timeout of a session an unlock here starts (`coffer unlock`'s default).
    public var sessionTimeout: TimeInterval {
        get { unlockPolicy.sessionTimeout }
        set { unlockPolicy.sessionTimeout = newValue }
    }
    /// When the master password was last proven to this host: shared by every request's
    /// provider, so a passkey signed a minute after a pinentry unlock is user-verified.
    public var userVerification: UserVerificationClock { unlockPolicy.userVerification }
    /// Whether an unlock with the password starts a keyring session. Desktop hosts do (the next
    /// request, and the CLI, need not ask again); a CLI command does not — there `coffer unlock`
    /// is the person's explicit choice to start one.
    public var startsSessions: Bool {
        get { unlockPolicy.startsSessions }
        set { unlockPolicy.startsSessions = newValue }
    }

    /// Which sites share their accounts, from the web quirks installed with Coffer: read once,
    /// on the first request that reaches past a site's own logins (never on a fill that finds
    /// one). `nil` when the data is missing or damaged: suggestions then stay within each site.
    public lazy var sharedCredentials: SharedCredentials? = webQuirks.flatMap { try? $0.sharedCredentials() }
    /// The web quirks installed with Coffer (SPEC.md §12.1), found once.
    public lazy var webQuirks: WebQuirks? = WebQuirks.installed(environment: environment)
    /// Where the web quirks and the teams are looked for (the CLI sets its own, tests inject it).
    public var environment: Environment {
        get { unlockPolicy.environment }
        set { unlockPolicy.environment = newValue }
    }

    /// Seconds a secret a host copied stays on the clipboard: `$COFFER_CLIP_TIME`, default 45
    /// (pass's habit). The CLI's `--clip` and the vault page's Copy clear after the same delay.
    public static func clipboardClearDelay(_ environment: Environment) -> Int {
        environment["COFFER_CLIP_TIME"].flatMap(Int.init).map { max(1, $0) } ?? 45
    }

    /// How many times a person may give the master password for one request.
    public static let passwordAttempts = UnlockPolicy.passwordAttempts

    public init(container: GroupContainer, configuration: VaultConfiguration, sessions: KeyringSessions?, interaction: UserInteraction?) {
        self.container = container
        self.configuration = configuration
        unlockPolicy = UnlockPolicy(configuration: configuration, sessions: sessions, interaction: interaction)
    }

    // MARK: Which container

    /// The container a host names: an explicit path (`--container`), else a group (`--group`),
    /// else `$COFFER_CONTAINER`, else the default group — one order for every host.
    /// - Throws: `StorageError.invalidGroupIdentifier` for a group name that is no name, or a
    ///   home directory that cannot be found for the default group.
    public static func resolveContainer(path: String?, group: String?, environment: Environment) throws -> GroupContainer {
        if let path { return GroupContainer(path: path) }
        if let group { return try GroupContainer(groupIdentifier: group, environment: environment) }
        if let path = environment["COFFER_CONTAINER"], !path.isEmpty { return GroupContainer(path: path) }
        return try GroupContainer(groupIdentifier: GroupContainer.defaultGroupIdentifier, environment: environment)
    }

    // MARK: Opening and unlocking

    /// Opens the vault, unlocked from a live keyring session when there is one (else locked:
    /// suggestions still work where the identity store is enabled).
    public func openVault() throws -> Vault {
        let vault = try Vault.open(container, configuration: configuration)
        unlockFromSession(vault)
        return vault
    }

    /// The vault for a request that reads no secret — a suggestion, a search, a listing of
    /// public keys — opened without touching a keyring session, so that asking (a page load,
    /// an ssh connection) never re-arms the idle timeout (SPEC.md §8.4). It reads what the
    /// identity store shows while locked.
    public func openVaultWithoutUse() throws -> Vault {
        try Vault.open(container, configuration: configuration)
    }

    /// Whether `vault` is unlocked here or a keyring session for it is live — looked at, not
    /// used (no idle timeout re-armed): what a host reports, never what it decrypts with.
    public func isUnlocked(_ vault: Vault) -> Bool { unlockPolicy.isUnlocked(vault) }

    /// Unlocks `vault` with a live keyring session (a team's, or its owner's); whether it is
    /// unlocked now. `UnlockPolicy.unlockFromSession(_:asUse:)`.
    @discardableResult
    public func unlockFromSession(_ vault: Vault, asUse: Bool = true) -> Bool {
        unlockPolicy.unlockFromSession(vault, asUse: asUse)
    }

    /// Unlocks `vault` for a request: a session, else the master password (`UnlockPolicy`).
    public func unlock(_ vault: Vault, reason: String) throws -> UnlockPolicy.Outcome {
        try unlockPolicy.unlock(vault, reason: reason)
    }

    /// Locks `vault` and ends its and its teams' keyring sessions (`UnlockPolicy.lock(_:)`).
    public func lock(_ vault: Vault) { unlockPolicy.lock(vault) }

    // MARK: What hosts use

    /// The teams `vault` (a person's own) opens on this device, by name (SPEC.md §16.6): with
    /// `vault` itself, "a person's vaults", assembled here for every host.
    public func teams(of vault: Vault, includingRemoved: Bool = false) -> [(name: String, vault: Vault)] {
        TeamDirectory.teams(ownedBy: vault.container, environment: environment, configuration: configuration, includingRemoved: includingRemoved)
    }

    /// A fill through one AutoFill list (SPEC.md §16.6): `vault`'s own logins, then those of
    /// the teams it opens on this device, in name order — first each one's logins for the
    /// requested hosts, then (nothing there) each one's whole sites. Each vault's provider keeps
    /// its own rules (the provision rule, locked means locked). A fill that finds its login in
    /// one's own vault never looks at a team.
    public func fill(
        from vault: Vault, rules: ServiceMatchingRules = .web, serviceIdentifiers: [CredentialServiceIdentifier], user: String? = nil,
        allowInteraction: Bool, kind: AutoFillHost.FillKind = .password, mayAsk: Bool = true
    ) -> AutoFillHost.Result {
        func fill(in vault: Vault, reach: AutoFillHost.Reach) -> AutoFillHost.Result {
            AutoFillHost(provider: provider(for: vault, mayAsk: mayAsk), rules: rules).fill(
                serviceIdentifiers: serviceIdentifiers, user: user, allowInteraction: allowInteraction, kind: kind, reach: reach)
        }
        let first = fill(in: vault, reach: .hosts)
        guard case .noMatch = first else { return first }
        let teams = teams(of: vault).map(\.vault)
        for reach in [AutoFillHost.Reach.hosts, .sites] {
            for candidate in (reach == .hosts ? [] : [vault]) + teams {
                let found = fill(in: candidate, reach: reach)
                if case .noMatch = found { continue }
                return found
            }
        }
        return .noMatch
    }

    /// The provider for a request on `vault`, with this host's sessions and — when the request
    /// may ask a person (`mayAsk`) — its interaction.
    public func provider(for vault: Vault, mayAsk: Bool = true) -> CredentialProvider {
        let provider = CredentialProvider(
            vault: vault, interaction: mayAsk ? interaction : nil, unlockPolicy: mayAsk ? unlockPolicy : unlockPolicy.withoutInteraction())
        provider.sharedCredentials = { self.sharedCredentials }
        return provider
    }
}
