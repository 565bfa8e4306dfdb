/// What a kind of vault adds to a sync round beyond its records, at the round's fixed points
/// (SPEC.md §15.4, §16.5). The store's sync knows records, tombstones and the header; a team's
/// membership list, its key rotations and its lease are `CofferTeams`' layer on it, which the
/// compiler keeps apart (the store cannot name a team type: scripts/check-layers). A vault
/// that holds a team's key file syncs only with a layer (`Vault.sync(_:layer:)` refuses it
/// without), and a remote's key file reaches a vault without one only to be refused.
package protocol SyncLayer: AnyObject {
    /// Before a sync starts, while the vault's keys may still change (a team takes its earlier
    /// keys from its membership history).
    func prepare(_ vault: Vault, _ options: SyncOptions) throws
    /// Whether this round must not push yet (another device holds the team's lease).
    func mustWait(forLease lease: String?, _ session: SyncSession) throws -> Bool
    /// Before the records are merged, with the remote's commit: judges and takes what the
    /// layer keeps beside the records (it may change `session.keys` and `session.remoteKeys`).
    func willMerge(remote: String, _ session: SyncSession) throws
    /// After the merge: re-seals what must not be pushed as it is; whether it wrote anything
    /// (then the round commits again).
    func didMerge(_ session: SyncSession) throws -> Bool
    /// Whether the unpushed commits go as one (a team: none sealed under a retired key).
    var squashesPushes: Bool { get }
    /// After a push the remote accepted.
    func didPush(_ session: SyncSession) throws
    /// Checks a file of the layer's own (`.teamKeys`) that this device is about to commit.
    func checkOwnFile(_ path: SyncedPath, file: String, _ session: SyncSession) throws
}

/// An error a sync layer throws that is already the answer a person gets (a membership refused,
/// a removal told): passed through as it is, never re-told as a damaged file.
package protocol SyncRefusal: Error {}
