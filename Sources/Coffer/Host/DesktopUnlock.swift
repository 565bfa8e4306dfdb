import FoundationEssentials

/// How a desktop host that found the vault locked (the browser host, the SSH agent) unlocks it:
/// the master password through its `UserInteraction` (pinentry), three attempts as the provider
/// allows, then a keyring session (SPEC.md §7.4), so the next request — and the CLI — need not
/// ask again until it expires or `coffer lock` ends it, which locks the host too.
public struct DesktopUnlock: Sendable {
    public enum Outcome: Equatable, Sendable {
        case unlocked
        /// The person cancelled (or pinentry timed out).
        case cancelled
        /// Three wrong master passwords.
        case wrongPassword
    }

    public let sessions: KeyringSessions?
    /// The session's idle timeout (`coffer unlock`'s default).
    public var sessionTimeout: TimeInterval = 15 * 60

    public init(sessions: KeyringSessions?) {
        self.sessions = sessions
    }

    /// Asks until the vault unlocks; an already unlocked vault is `.unlocked` without asking.
    public func unlock(_ vault: Vault, with interaction: UserInteraction, reason: String) throws -> Outcome {
        guard !vault.isUnlocked else { return .unlocked }
        for attempt in 1...3 {
            guard let password = try interaction.requestMasterPassword(attempt: attempt, reason: reason) else { return .cancelled }
            do {
                try vault.unlock(masterPassword: password)
                startSession(for: vault)
                return .unlocked
            } catch VaultError.wrongPassword {
                continue
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
}
