import CofferStore
import CofferFormat
import FoundationEssentials

/// The one way a locked vault becomes unlocked, for the provider and every host — the CLI's
/// `unlock` included (SPEC.md §8.3–§8.4, §16.6):
///
/// 1. a live keyring session (unless a script supplied the password, which is always checked);
/// 2. a team through its owner: the person's own vault, by its session or its password, whose
///    identity opens the team;
/// 3. the master password through the host's interaction, three attempts counted here once;
/// 4. then, where the host wants it, a keyring session, so the next host need not ask.
///
/// The provider receives it (it never sees a host); `HostSession` makes one per host.
public final class UnlockPolicy {
    public let configuration: VaultConfiguration
    /// Unlock sessions shared by this user's processes; `nil`: never used.
    public let sessions: KeyringSessions?
    /// How a person is asked; `nil`: nobody can be (locked means locked).
    public let interaction: UserInteraction?
    /// When the master password was last proven here: a passkey signed soon after a pinentry
    /// unlock is user-verified (SPEC.md §8.2.1).
    public let userVerification: UserVerificationClock
    /// Whether an unlock with the password starts a keyring session (desktop hosts: yes; a CLI
    /// command: only `coffer unlock`, the person's explicit choice).
    public var startsSessions = true
    /// Whether a live session may stand in for the password. Off when a script supplies the
    /// password: that line is always read and checked (SPEC.md §8.3).
    public var unlocksFromSessions = true
    /// The idle timeout of a session an unlock here starts.
    public var sessionTimeout: TimeInterval = 15 * 60
    /// Whether a session this policy starts replaces a live one (`coffer unlock --timeout`).
    public var replacesSessions = false
    /// Whether a PIN may stand in for the master password where quick unlock is on (SPEC.md
    /// §8.6). Off where only the master password proves enough (`quick-unlock enable`).
    public var allowsQuickUnlock = true
    /// Where a host tells the person that quick unlock ended (a restart, three wrong PINs).
    public var quickUnlockNotice: ((String) -> Void)?
    /// The system's authentication (polkit), where this host can reach the system bus.
    public var systemAuthenticator: SystemAuthenticator?
    /// Where the teams a vault opens are looked for (`$XDG_DATA_HOME`).
    public var environment: Environment

    /// How many times a person may give the master password for one request (as sudo and gpg).
    public static let passwordAttempts = 3

    public init(
        configuration: VaultConfiguration, sessions: KeyringSessions?, interaction: UserInteraction?,
        userVerification: UserVerificationClock = UserVerificationClock(), environment: Environment = .process
    ) {
        self.configuration = configuration
        self.sessions = sessions
        self.interaction = interaction
        self.userVerification = userVerification
        self.environment = environment
    }

    /// The same policy with nobody to ask: for a request that must not prompt.
    public func withoutInteraction() -> UnlockPolicy {
        let copy = UnlockPolicy(
            configuration: configuration, sessions: sessions, interaction: nil, userVerification: userVerification, environment: environment)
        copy.startsSessions = startsSessions
        copy.unlocksFromSessions = unlocksFromSessions
        copy.sessionTimeout = sessionTimeout
        copy.replacesSessions = replacesSessions
        copy.allowsQuickUnlock = allowsQuickUnlock
        copy.quickUnlockNotice = quickUnlockNotice
        copy.systemAuthenticator = systemAuthenticator
        return copy
    }

    public enum Outcome: Equatable, Sendable {
        case unlocked
        /// Nobody to ask (no interaction): locked means locked.
        case noInteraction
        /// The person cancelled (or the prompt timed out).
        case cancelled
        /// Three wrong master passwords.
        case wrongPassword
    }

    // MARK: Sessions

    /// Unlocks `vault` with a live keyring session; whether it is unlocked now.
    ///
    /// A team has a session of its own after its owner's unlock; without one, a live session of
    /// the owner opens it and a team session with the owner's idle timeout is started:
    /// unlocking one's vault unlocks one's teams. A team's session counts only while its owner's
    /// is live, and using it re-arms the owner's.
    /// - Parameter asUse: whether the request may read or change a secret and so re-arms the
    ///   sessions' idle timeouts (SPEC.md §8.4); a listing or a lock state passes false.
    @discardableResult
    public func unlockFromSession(_ vault: Vault, asUse: Bool = true) -> Bool {
        (try? unlockFromSessionReportingErrors(vault, asUse: asUse)) ?? false
    }

    /// `unlockFromSession(_:)` that throws when the keyring could not be asked at all (the CLI
    /// says so once and goes on without sessions) instead of counting it as no session.
    public func unlockFromSessionReportingErrors(_ vault: Vault, asUse: Bool = true) throws -> Bool {
        if vault.isUnlocked { return true }
        guard unlocksFromSessions, let sessions else { return false }
        let keyringError: Error?
        do {
            if try vault.unlock(fromSessions: sessions, rearming: asUse) {
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

    /// Whether `vault` is unlocked here or a keyring session for it is live — looked at, not
    /// used (no idle timeout re-armed).
    public func isUnlocked(_ vault: Vault) -> Bool {
        if vault.isUnlocked { return true }
        guard let sessions, case .unlocked? = try? sessions.status(for: vault.vaultID) else { return false }
        return true
    }

    /// A long-lived host's vault, unlocked exactly when its keyring session is live (SPEC.md
    /// §8.4): a session that ended (`coffer lock`, the idle timeout) locks it here too, and a
    /// live one unlocks it — without counting as a use. - Returns: whether it is unlocked.
    @discardableResult
    public func followSession(_ vault: Vault) -> Bool {
        guard vault.isUnlocked else { return unlockFromSession(vault, asUse: false) }
        guard let sessions else { return true }
        if case .unlocked? = try? sessions.status(for: vault.vaultID) { return true }
        vault.lock()
        return false
    }

    /// A secret was read or changed through a long-lived host: its session's idle timeout is
    /// pushed back, as a CLI command's use does (SPEC.md §8.4).
    public func rearmSession(of vault: Vault) {
        _ = try? sessions?.load(for: vault.vaultID)
    }

    /// The personal vault that opens team `vault` on this device; `nil` for a personal vault.
    public func openTeamOwner(of vault: Vault) -> Vault? {
        guard let owner = TeamDirectory.owner(of: vault) else { return nil }
        return try? Vault.open(owner, configuration: configuration)
    }

    // MARK: Unlocking

    /// Unlocks `vault` for a request: a session, else the master password through the
    /// interaction (three attempts), after which a keyring session is started when
    /// `startsSessions`.
    /// - Parameter proving: ask for the password even when the vault is unlocked (a passkey's
    ///   user verification); a team proves its owner's password.
    /// - Throws: what the interaction or the vault throws beyond a wrong password (a corrupt
    ///   header, a pinentry that cannot start, a supplied password already used).
    public func unlock(_ vault: Vault, reason: String, proving: Bool = false) throws -> Outcome {
        if !proving, unlockFromSession(vault) {
            if replacesSessions { startSession(for: vault) }
            return .unlocked
        }
        if let ownerContainer = TeamDirectory.owner(of: vault) {
            // A team opens with its owner's identity: the person gives their own password.
            guard let owner = try? Vault.open(ownerContainer, configuration: configuration) else {
                throw TeamError.invalid("the vault that opens this team is gone from this device")
            }
            let outcome = try unlock(owner, reason: reason, proving: proving)
            guard outcome == .unlocked else { return outcome }
            try vault.unlockTeam(identity: owner.personalIdentity())
            if startsSessions { startSession(for: vault) }
            return .unlocked
        }
        guard let interaction else { return .noInteraction }
        let quick = allowsQuickUnlock && !interaction.suppliesPassword ? quickUnlockSecrets(for: vault) : nil
        if let quick, quick.method == .system {
            if try unlockWithSystemAuthentication(vault, secrets: quick.secrets, reason: reason) { return .unlocked }
        }
        var quickUnlock = quick?.method.takesPIN == true ? quick?.secrets : nil
        var tpmAlone = quick?.method == .tpm
        for attempt in 1...Self.passwordAttempts {
            let secret = quickUnlock != nil
                ? try interaction.requestPINOrMasterPassword(attempt: attempt, reason: reason)
                : tpmAlone ? try interaction.requestTPMOrMasterPassword(attempt: attempt, reason: reason)
                : try interaction.requestMasterPassword(attempt: attempt, reason: reason)
            guard let secret else { return .cancelled }
            if tpmAlone, secret.count == 0 {
                // An empty answer where the TPM alone opens the vault: the person asked for it.
                tpmAlone = false
                switch try vault.unlockWithTPM(tpm) {
                case .unlocked: return personUnlocked(vault)
                case .unavailable(let end): quickUnlockNotice?("\(end.map(String.init(describing:)) ?? "quick unlock is off"); the master password is needed")
                case .wrong: break
                }
                continue
            }
            // Quick unlock first (tens of milliseconds); what is no PIN is the master password.
            var triedPIN = false
            if let secrets = quickUnlock {
                switch try vault.unlock(pin: secret, secrets: secrets, tpm: tpm) {
                case .unlocked: return personUnlocked(vault)
                case .wrong: triedPIN = true
                case .unavailable(let end):
                    if let end { quickUnlockNotice?("\(end); the master password is needed") }
                    quickUnlock = nil
                }
            }
            let right = try unlock(vault, masterPassword: secret, interaction: interaction)
            if triedPIN, let secrets = quickUnlock {
                vault.settleQuickUnlock(passwordWasRight: right, secrets: secrets)
                if case .available = vault.quickUnlockState(secrets: secrets) {} else {
                    quickUnlockNotice?("\(QuickUnlockEnd.tooManyAttempts); the master password is needed from now on")
                    quickUnlock = nil
                }
            }
            guard right else { continue }
            vault.renewQuickUnlock()
            return personUnlocked(vault)
        }
        return .wrongPassword
    }

    /// The TPM quick unlock's TCTI comes from the host's environment (SPEC.md §8.6.1).
    private var tpm: TPM { TPM(environment: environment) }

    /// The person opened `vault` just now (the master password, a PIN, the TPM, the system's
    /// authentication): a passkey may count as verified, and a session starts where this host wants.
    private func personUnlocked(_ vault: Vault) -> Outcome {
        userVerification.markVerified()
        if startsSessions { startSession(for: vault) }
        return .unlocked
    }

    /// Whether `password` unlocks `vault` (the interaction shows progress while Argon2id runs).
    private func unlock(_ vault: Vault, masterPassword password: SecureBytes, interaction: UserInteraction) throws -> Bool {
        let derived = interaction.willDeriveKey(vault.kdfParameters)
        defer { derived() }
        do throws(VaultError) {
            try vault.unlock(masterPassword: password)
            return true
        } catch {
            guard case .wrongPassword = error else { throw error }
            return false
        }
    }

    /// Quick unlock through the system's authentication (SPEC.md §8.6): whether it unlocked.
    /// A refusal, or no authenticator to answer, leaves the master password to be asked.
    private func unlockWithSystemAuthentication(_ vault: Vault, secrets: KeyringSessions, reason: String) throws -> Bool {
        guard let systemAuthenticator else { return false }  // a host without the system bus (the git helper)
        switch systemAuthenticator.authenticate(reason: reason) {
        case .authorized:
            guard try vault.unlockAfterSystemAuthentication(secrets: secrets) else { return false }
            _ = personUnlocked(vault)
            return true
        case .denied:
            quickUnlockNotice?("the system's authentication was refused; the master password is needed")
        case .unavailable(let why):
            quickUnlockNotice?("the system's authentication is unavailable (\(why)); the master password is needed")
        }
        return false
    }

    /// The keyring that holds `vault`'s quick unlock secret, and its method, when quick unlock
    /// can be tried now (on, and not ended); `nil` otherwise. An ended one is told through
    /// `quickUnlockNotice`.
    private func quickUnlockSecrets(for vault: Vault) -> (secrets: KeyringSessions, method: QuickUnlockFile.Method)? {
        let secrets = sessions ?? KeyringSessions()
        switch vault.quickUnlockState(secrets: secrets) {
        case .available(let method, _, _): return (secrets, method)
        case .ended(.renewable):
            quickUnlockNotice?("\(QuickUnlockEnd.renewable); the master password is needed this once")
            return nil
        case .ended(let end):
            quickUnlockNotice?("\(end); the master password is needed ('coffer quick-unlock enable' turns it on again)")
            return nil
        case .off: return nil
        }
    }

    /// A keyring session for an unlocked vault, unless one is live (or replacing it). Best
    /// effort: without the keyring the host still answers this request.
    public func startSession(for vault: Vault) {
        try? startSessionReportingErrors(for: vault)
    }

    /// `startSession(for:)` that says why the keyring refused (`coffer unlock` reports it).
    public func startSessionReportingErrors(for vault: Vault) throws {
        guard let sessions, let keys = try? vault.keys() else { return }
        if !replacesSessions, (try? sessions.load(for: vault.vaultID)) != nil { return }
        try sessions.store(vaultKey: keys.vaultKey, for: vault.vaultID, idleTimeout: sessionTimeout)
    }

    /// Locks `vault` here and ends its keyring session and its teams', so every process of the
    /// user is locked (the browser's lock, the Secret Service's). Best effort.
    public func lock(_ vault: Vault) {
        _ = try? lockReportingErrors(vault)
    }

    /// `lock(_:)` that says why the keyring could not be asked (`coffer lock` reports it).
    /// - Returns: whether a session was live.
    public func lockReportingErrors(_ vault: Vault) throws -> Bool {
        vault.lock()
        configuration.identityBucketCache?.removeAll()
        var ended = try sessions?.revoke(for: vault.vaultID) ?? false
        for team in TeamDirectory.teams(ownedBy: vault.container, environment: environment, configuration: configuration, includingRemoved: true) {
            ended = try (sessions?.revoke(for: team.vault.vaultID) ?? false) || ended
        }
        return ended
    }
}
