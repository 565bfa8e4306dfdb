import FoundationEssentials

/// The one door every host enters by (the CLI, the git and docker helpers, the browser host, the
/// SSH agent, the pickers, `run`/`inject`): which container, how a vault is opened, and how a
/// locked one is unlocked — a live keyring session first, else the master password through the
/// host's `UserInteraction`, three attempts, then a keyring session so the person is not asked
/// again by the next host (SPEC.md §8.3–§8.4). A rule like "locked means locked" lives here
/// once, so a new host cannot forget it.
public final class HostSession {
    public let container: GroupContainer
    public let configuration: VaultConfiguration
    /// Unlock sessions shared by this user's processes; `nil`: this host never uses them.
    public let sessions: KeyringSessions?
    /// How this host asks a person (pinentry, a terminal, a script); `nil`: it never asks.
    public let interaction: UserInteraction?
    /// The idle timeout of a session an unlock here starts (`coffer unlock`'s default).
    public var sessionTimeout: TimeInterval = 15 * 60
    /// When the master password was last proven to this host: shared by every request's
    /// provider, so a passkey signed a minute after a pinentry unlock is user-verified.
    public let userVerification = UserVerificationClock()
    /// Whether an unlock with the password starts a keyring session. Desktop hosts do (the next
    /// request, and the CLI, need not ask again); a CLI command does not — there `coffer unlock`
    /// is the person's explicit choice to start one.
    public var startsSessions = true

    /// Which sites share their accounts, from the web quirks installed with Coffer: read once,
    /// on the first request that reaches past a site's own logins (never on a fill that finds
    /// one). `nil` when the data is missing or damaged: suggestions then stay within each site.
    public lazy var sharedCredentials: SharedCredentials? = webQuirks.flatMap { try? $0.sharedCredentials() }
    /// The web quirks installed with Coffer (SPEC.md §12.1), found once.
    public lazy var webQuirks: WebQuirks? = WebQuirks.installed(environment: environment)
    /// Where the web quirks are looked for (`$COFFER_WEB_QUIRKS`). Lazy: a host that sets its
    /// own (the CLI's) never copies the process's (0.1 M instructions of a fill).
    public lazy var environment: Environment = .process

    /// How many times a person may give the master password for one request (the provider's).
    public static let passwordAttempts = CredentialProvider.passwordAttempts

    public init(container: GroupContainer, configuration: VaultConfiguration, sessions: KeyringSessions?, interaction: UserInteraction?) {
        self.container = container
        self.configuration = configuration
        self.sessions = sessions
        self.interaction = interaction
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
    public func isUnlocked(_ vault: Vault) -> Bool {
        if vault.isUnlocked { return true }
        guard let sessions, case .unlocked? = try? sessions.status(for: vault.vaultID) else { return false }
        return true
    }

    /// Unlocks `vault` with a live keyring session; whether it is unlocked now.
    ///
    /// A team (SPEC.md §16.6) has a session of its own after its owner's unlock; without one, a
    /// live session of the owner — the person's own vault — opens it, and a team session with
    /// the owner's idle timeout is started: unlocking one's vault unlocks one's teams. A team's
    /// session counts only while its owner's is live, and using it re-arms the owner's.
    ///
    /// - Parameter asUse: whether the request may read or change a secret and so re-arms the
    ///   sessions' idle timeouts (SPEC.md §8.4); a host answering only what there is — a
    ///   listing, a lock state — passes false.
    @discardableResult
    public func unlockFromSession(_ vault: Vault, asUse: Bool = true) -> Bool {
        (try? unlockFromSessionReportingErrors(vault, asUse: asUse)) ?? false
    }

    /// `unlockFromSession(_:)` that throws when the keyring could not be asked at all (the CLI
    /// says so once and goes on without sessions) instead of counting it as no session.
    public func unlockFromSessionReportingErrors(_ vault: Vault, asUse: Bool = true) throws -> Bool {
        if vault.isUnlocked { return true }
        guard let sessions else { return false }
        let keyringError: Error?
        do {
            if try vault.unlock(fromSessions: sessions, rearming: asUse) {
                // A team's session lives with its owner's (SPEC.md §16.6): a use of the team is a
                // use of one's vault (its idle timeout re-armed too), and once one's own session
                // has ended — idle, or locked — the team's ends with it.
                guard let owner = openTeamOwner(of: vault) else { return true }
                if (try? sessions.load(for: owner.vaultID, rearming: asUse)) != nil {
                    // The session holds the current key only: after a rotation by another
                    // process, reads take the team's keys again through the owner (§16.5).
                    let ownerContainer = owner.container, configuration = self.configuration
                    vault.setTeamKeySource { [weak vault] in
                        guard let vault else { throw VaultError.locked }
                        let owner = try Vault.open(ownerContainer, configuration: configuration)
                        guard try owner.unlock(fromSessions: sessions, rearming: false) else { throw VaultError.locked }
                        return try vault.readTeam(identity: owner.personalIdentity()).keys
                    }
                    return true
                }
                vault.lock()
                _ = try? sessions.revoke(for: vault.vaultID)
                return false
            }
            keyringError = nil
        } catch {
            keyringError = error
        }
        // A team without a session of its own opens with its owner's.
        guard let owner = openTeamOwner(of: vault), (try? owner.unlock(fromSessions: sessions, rearming: asUse)) == true,
              (try? vault.unlockTeam(identity: owner.personalIdentity())) != nil
        else {
            if let keyringError { throw keyringError }
            return false
        }
        if case .unlocked(_, let idle)? = try? sessions.status(for: owner.vaultID), let keys = try? vault.keys() {
            try? sessions.store(vaultKey: keys.vaultKey, for: vault.vaultID, idleTimeout: idle)
        }
        return true
    }

    /// The personal vault that opens team `vault` on this device; `nil` for a personal vault.
    public func openTeamOwner(of vault: Vault) -> Vault? {
        guard let owner = TeamDirectory.owner(of: vault) else { return nil }
        return try? Vault.open(owner, configuration: configuration)
    }

    public enum UnlockOutcome: Equatable, Sendable {
        case unlocked
        /// Nobody to ask (no interaction): locked means locked.
        case noInteraction
        /// The person cancelled (or the prompt timed out).
        case cancelled
        /// Three wrong master passwords.
        case wrongPassword
    }

    /// Unlocks `vault` for a request: a session, else the master password through the
    /// interaction (three attempts), after which a keyring session is started (best effort).
    /// - Throws: what the interaction or the vault throws beyond a wrong password (a corrupt
    ///   header, a pinentry that cannot start).
    public func unlock(_ vault: Vault, reason: String) throws -> UnlockOutcome {
        if unlockFromSession(vault) { return .unlocked }
        if let ownerContainer = TeamDirectory.owner(of: vault) {
            // A team opens with its owner's identity: the person gives their own password.
            guard let owner = try? Vault.open(ownerContainer, configuration: configuration) else {
                throw TeamError.invalid("the vault that opens this team is gone from this device")
            }
            let outcome = try unlock(owner, reason: reason)
            guard outcome == .unlocked else { return outcome }
            try vault.unlockTeam(identity: owner.personalIdentity())
            if startsSessions { startSession(for: vault) }
            return .unlocked
        }
        guard let interaction else { return .noInteraction }
        for attempt in 1...Self.passwordAttempts {
            guard let password = try interaction.requestMasterPassword(attempt: attempt, reason: reason) else { return .cancelled }
            let derived = interaction.willDeriveKey(vault.kdfParameters)
            do {
                try vault.unlock(masterPassword: password)
                derived()
                userVerification.markVerified()
                if startsSessions { startSession(for: vault) }
                return .unlocked
            } catch VaultError.wrongPassword {
                derived()
                continue
            } catch {
                derived()
                throw error
            }
        }
        return .wrongPassword
    }

    /// A keyring session for an unlocked vault unless one is live. Best effort: without the
    /// keyring the host still answers this request.
    public func startSession(for vault: Vault) {
        guard let sessions, let keys = try? vault.keys(), (try? sessions.load(for: vault.vaultID)) == nil else { return }
        try? sessions.store(vaultKey: keys.vaultKey, for: vault.vaultID, idleTimeout: sessionTimeout)
    }

    /// Locks `vault` here and ends the keyring session, so every process of the user is locked
    /// (`coffer lock`'s effect, asked for by a host's client: the browser, the Secret Service).
    public func lock(_ vault: Vault) {
        vault.lock()
        _ = try? sessions?.revoke(for: vault.vaultID)
        for team in TeamDirectory.teams(ownedBy: vault.container, environment: environment, configuration: configuration, includingRemoved: true) {
            _ = try? sessions?.revoke(for: team.vault.vaultID)
        }
        configuration.identityBucketCache?.removeAll()
    }

    // MARK: What hosts use

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
        let teams = TeamDirectory.teams(ownedBy: vault.container, environment: environment, configuration: configuration).map(\.vault)
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
        let provider = CredentialProvider(vault: vault, interaction: mayAsk ? interaction : nil, sessions: sessions)
        provider.sharedCredentials = { self.sharedCredentials }
        provider.userVerification = userVerification
        provider.host = self
        return provider
    }
}
