import CofferFormat
extension Vault {
    /// Unlocks with the vault key of a live `coffer unlock` session (SPEC.md §8.4): the one way
    /// the provider, every host and the CLI take a session.
    /// - Parameter rearming: whether this counts as a use (re-arms the idle timeout); a host
    ///   that only answers what there is (a listing, a lock state) passes false.
    /// - Returns: whether the vault is unlocked now (it may already have been).
    /// - Throws: `KeyringSessions.Unavailable` when the keyring cannot be asked at all (a host
    ///   that says so once, as the CLI does, catches it; others treat it as no session).
    @discardableResult
    public func unlock(fromSessions sessions: KeyringSessions, rearming: Bool = true) throws(KeyringSessions.Unavailable) -> Bool {
        if isUnlocked { return true }
        guard let key = try sessions.load(for: vaultID, rearming: rearming) else { return false }
        return (try? unlock(vaultKey: key)) != nil
    }
}
