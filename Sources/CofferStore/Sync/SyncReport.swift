import CofferFormat
/// How `sync` runs: whether it pushes, the environment git gets (transport and credentials are
/// the user's own), and a hook at each step for the crash tests.
public struct SyncOptions: Sendable {
    public var push: Bool
    public var environment: Environment
    /// Called after each step; the crash tests kill the process there.
    public var stepObserver: (@Sendable (SyncStep) -> Void)?
    /// A team's sync: this person's identity, asked for only when the remote's membership
    /// brings a new team key to open (SPEC.md §16.5).
    public var teamIdentity: (@Sendable () throws -> PersonalIdentity)?
    /// The team's membership lease this caller holds (`Vault.withMembershipLease`): its syncs
    /// push through it; every other device waits for it (SPEC.md §16.5).
    public var heldLease: String?
    /// How long a device waits for a lease it sees on the remote: SPEC.md §16.5's 30 s. Tests
    /// lower it through the API; the default is never changed.
    public var leaseSeconds = 30

    public init(
        push: Bool = true, environment: Environment = .process, stepObserver: (@Sendable (SyncStep) -> Void)? = nil,
        teamIdentity: (@Sendable () throws -> PersonalIdentity)? = nil, heldLease: String? = nil
    ) {
        self.push = push
        self.environment = environment
        self.stepObserver = stepObserver
        self.teamIdentity = teamIdentity
        self.heldLease = heldLease
    }
}

/// The steps of one sync, in order (SPEC.md §15.4).
public enum SyncStep: String, Sendable, CaseIterable {
    /// This device's changes are committed (tombstones written for its deletions).
    case committed
    case fetched
    /// The remote's changes are authenticated and decided; nothing written yet.
    case planned
    /// The merged state is in the container and the merge commit made.
    case merged
    case pushed
}

/// Added, updated and deleted records in one direction.
public struct SyncCounts: Sendable, Equatable {
    public var added = 0
    public var updated = 0
    public var deleted = 0

    public var total: Int { added + updated + deleted }

    /// Counts `change` when it is a record's.
    mutating func count(_ change: TreeChange) {
        guard case .record = SyncedPath(change.path) else { return }
        switch (change.oldObject, change.newObject) {
        case (nil, _?): added += 1
        case (_?, nil): deleted += 1
        default: updated += 1
        }
    }
}

/// What the remote's history did since this device's last sync.
public enum RemoteHistory: String, Sendable {
    /// First sync with this remote (or its first commit).
    case new
    /// The remote went on from where this device left it (or stayed there).
    case continued
    /// The remote was reset to an older commit of its history (`git push --force`).
    case rewound
    /// The remote's history was replaced by one that does not contain this device's last sync.
    case rewritten
    /// The remote has no vault (an empty repository).
    case empty
}

/// What one `sync` did.
public struct SyncReport: Sendable {
    /// Changes this device took from the remote.
    public var incoming = SyncCounts()
    /// Changes the remote gets from this device (pushed, or waiting with `--no-push`).
    public var outgoing = SyncCounts()
    /// Records edited on both sides, joined into a new revision.
    public var conflicts = 0
    /// Of those, the ones whose losing version is kept as an item of its own.
    public var conflictCopies = 0
    /// Records (or tombstones) where the remote offered an older state than this device holds or
    /// has seen; the newer state was kept, and is pushed back.
    public var remoteBehind = 0
    /// Records the remote holds although this device remembers deleting them: refused.
    public var refusedPutBack = 0
    public var remoteHistory = RemoteHistory.new
    /// The master password was changed elsewhere and this device took the new header.
    public var headerAdopted = false
    /// Both sides changed the master password; the other side's change won (SPEC.md §15.3).
    public var headerConflict = false
    /// A team's membership changed on the remote and this device took it.
    public var membershipChanged = false
    /// ... and with it a new team key (a member was removed): sessions holding the old one
    /// must be replaced.
    public var teamKeyChanged = false
    /// Membership changes this device made and never pushed, dropped because another admin
    /// changed the list first (SPEC.md §16.5): to be made again.
    public var droppedMembershipChanges: [String] = []
    /// Time spent waiting, without pushing, for another device's membership change (its lease).
    public var leaseWait = Duration.zero
    public var pushed = false
    /// The container's git repository was damaged (a power loss) and rebuilt from the vault's
    /// sealed files before this sync (SPEC.md §15.4).
    public var repairedRepository = false
    /// The commit this device's `main` is at afterwards.
    public var head: String?
    /// Time spent in git (fetch and push included) and in all.
    /// How many paths the last commit staged from its baseline (SPEC.md §15.4); `nil` when it
    /// staged the whole container (`git add -A`: a first sync, or no baseline that holds).
    public var stagedPaths: Int?
    public var gitTime = Duration.zero
    public var totalTime = Duration.zero

    /// Whether a person should hear of it even after a sync they did not ask for: something
    /// came in, was joined, or the remote's history or the member list changed.
    public var hasNews: Bool {
        incoming.total > 0 || conflicts > 0 || repairedRepository || remoteHistory == .rewound || remoteHistory == .rewritten || membershipChanged || headerAdopted
    }
}
