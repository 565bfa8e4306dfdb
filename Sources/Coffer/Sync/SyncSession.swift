import FoundationEssentials
import Glibc

/// One `sync` of an unlocked vault with its remote (SPEC.md §16.4): commit this device's changes,
/// fetch, authenticate and merge what the remote changed, push.
///
/// git only stores and carries: every fetched file is opened with the vault's keys before any of
/// it is used, the merge is decided by `SyncMerge`, and the merged records reach the container
/// through the vault's own journaled transaction, so the identity index is rebuilt by Coffer for
/// exactly the records that changed and no git merge ever touches a sealed file.
final class SyncSession {
    let vault: Vault
    let keys: VaultKeys
    let git: Git
    let options: SyncOptions
    private(set) var report = SyncReport()
    static let attempts = 10
    private var fileSystem: FileSystem { vault.fileSystem }

    init(vault: Vault, options: SyncOptions) throws(VaultError) {
        self.vault = vault
        keys = try vault.keys()
        git = Git(container: vault.container.path, environment: options.environment)
        self.options = options
    }

    /// Runs the sync; `adoptingRemote` is a clone's first one (nothing local to commit).
    func run(adoptingRemote: Bool = false) throws -> SyncReport {
        let started = ContinuousClock.now
        do {
            guard git.exists, try git.remoteURL() != nil else { throw SyncError.notConfigured(container: vault.container.path) }
            try withSyncLock {
                git.removeStaleLocks()
                // A push loses the race when another device pushed since the fetch; so does a
                // merge when a write on this device touched a merged record: start again, after
                // a random pause that grows, so that two devices do not keep colliding.
                for round in 0..<Self.attempts {
                    if try attempt(adoptingRemote: adoptingRemote) { return }
                    usleep(UInt32.random(in: 0..<(50_000 << min(round, 4))))
                }
                throw SyncError.git(command: "push", status: 1, message: "the remote or the vault kept changing during the sync; run it again")
            }
        } catch let error as SyncError {
            throw error
        } catch {
            try mappingErrors(file: vault.container.path) { throw error }
        }
        report.gitTime = git.elapsed
        report.totalTime = ContinuousClock.now - started
        return report
    }

    /// One round. - Returns: `false` to start again.
    private func attempt(adoptingRemote: Bool) throws -> Bool {
        if !adoptingRemote { try commitLocalChanges() }
        options.stepObserver?(.committed)
        try git.fetch()
        options.stepObserver?(.fetched)
        // Between the fetch and the push another device may push; the fewer git calls in
        // between, the more often this device wins that race.
        let refs = try git.syncRefs()
        let (remote, synced) = (refs.remote, refs.synced)
        var head = refs.head
        // The remote is still where this device left it: its state is already merged here.
        let alreadyMerged = remote == synced || remote == head
        if let remote, !alreadyMerged, try head.map({ try !git.isAncestor(remote, of: $0) }) ?? true {
            guard let mergeCommit = try merge(head: head, remote: remote, base: synced) else { return false }
            head = mergeCommit
        }
        options.stepObserver?(.merged)
        report.head = head
        guard let head else {  // an empty vault and an empty remote
            report.remoteHistory = .empty
            return true
        }
        if options.push, head != remote {
            guard try git.push(head) else { return false }
            report.pushed = true
            try git.setRefs([Git.remoteBranch, Git.syncedRef], to: head)
            options.stepObserver?(.pushed)
        } else if let remote {
            try git.setRefs([Git.syncedRef], to: remote)
        }
        // Reporting only, once the race is over.
        report.remoteHistory = try history(synced: synced, remote: remote)
        report.outgoing = try outgoingChanges(from: remote, to: head)
        return true
    }

    /// Serialises syncs of one container (an automatic sync after each write may overlap a
    /// manual one): an exclusive `flock` on `.git/coffer-sync.lock`.
    private func withSyncLock<Result>(_ body: () throws -> Result) throws -> Result {
        let opened = try vault.openContainer()
        let gitDirectory = try fileSystem.directory(GroupContainer.gitName, in: opened.root)
        return try FileLock("coffer-sync.lock", in: gitDirectory, fileSystem: fileSystem).withLock(.exclusive, body)
    }

    private func history(synced: String?, remote: String?) throws -> RemoteHistory {
        guard let remote else { return .empty }
        guard let synced else { return .new }
        if synced == remote { return .continued }
        if try git.isAncestor(synced, of: remote) { return .continued }
        return try git.isAncestor(remote, of: synced) ? .rewound : .rewritten
    }

    // MARK: This device's changes

    /// Commits what changed in the container since the last commit, under the vault's lock so
    /// that no write is half in it: a tombstone for each record deleted since, a fresh header
    /// seal after a password change, then every record, tombstone and header file as it is.
    private func commitLocalChanges() throws {
        // Staged once without the lock, so that the locked pass only re-reads what changed
        // meanwhile: the first sync of 10,000 records writes 10,000 git objects (2.8 s here),
        // and fills would wait for all of it. A file torn or removed by a write in between is
        // re-read by the second pass; its first object is never referenced, so never pushed.
        _ = try? git.stageAll()
        try vault.exclusiveTransaction { opened in
            try vault.recover(vault.identityIndex(opened))
            let head = try git.syncRefs().head
            try sealHeaderIfNeeded(opened)
            if let head { try rememberDeletions(since: head, in: opened) }
            try git.stageAll()
            let tree = try git.writeTree()
            let headTree = try head.map { try git.tree(of: $0) }
            guard tree != headTree else { return }
            let changes = try git.changes(from: headTree ?? git.emptyTree, to: tree)
            for change in changes where change.newObject != nil {
                guard SyncedPath(change.path) != nil, change.newMode == SyncedPath.fileMode else {
                    throw VaultError.corrupt(
                        file: vault.container.path + "/" + change.path,
                        reason: "is not a file of a vault (planted, or left by another program); nothing was synced ('coffer verify' lists such entries)")
                }
            }
            let commit = try git.commitTree(tree, parents: head.map { [$0] } ?? [], message: Self.message(changes.count))
            try git.updateRef(Git.branch, to: commit, from: head)
        }
    }

    /// A commit message that counts and names nothing (SPEC.md §16.5).
    static func message(_ count: Int, merge: Bool = false) -> String {
        "coffer: " + (merge ? "merge, " : "") + (count == 1 ? "1 change" : "\(count) changes")
    }

    /// Writes `vault.seal` when the header has none that matches (a vault's first sync, or a
    /// `coffer passwd` since the last one).
    private func sealHeaderIfNeeded(_ opened: OpenContainer) throws {
        let header = try fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length)
        let seal = try? fileSystem.readFile(GroupContainer.headerSealName, in: opened.root, limit: HeaderSeal.fileLength)
        if let seal, HeaderSeal.isValid(seal, for: header, vaultID: vault.vaultID, key: keys.recordKey) { return }
        let sealed = try HeaderSeal.seal(header: header, vaultID: vault.vaultID, key: keys.recordKey)
        try fileSystem.writeAtomically(sealed, to: GroupContainer.headerSealName, in: opened.root, via: opened.temporary)
    }

    /// A tombstone for each record file committed before and gone now, carrying the revision the
    /// commit holds (SPEC.md §16.2). One already there for that revision or a later one (a
    /// remote deletion the merge wrote) is kept; an older one (left by a crash after an edit
    /// outlived it) is replaced, or the deletion would lose to that edit's revision.
    private func rememberDeletions(since head: String, in opened: OpenContainer) throws {
        let deleted = try git.deletedFiles(since: head, under: SyncedPath.recordsDirectory).compactMap { change -> (RecordID, String)? in
            guard case .record(let id) = SyncedPath(change.path), let object = change.oldObject else { return nil }
            return (id, object)
        }
        guard !deleted.isEmpty else { return }
        let blobs = try git.blobs(deleted.map(\.1), limit: RecordEnvelope.maximumFileLength)
        let now = RecordCoding.wholeSeconds(Date())
        for (id, object) in deleted {
            let shard = try tombstoneShard(of: id, in: opened, create: true)
            let record = try open(record: blobs[object] ?? [], id: id, path: SyncedPath.record(id).path, fromRemote: false)
            if let existing = try? fileSystem.readFile(id.hex, in: shard, limit: Tombstone.fileLength),
               let kept = try? Tombstone.open(existing, id: id, vaultID: vault.vaultID, key: keys.recordKey), kept.revision >= record.revision {
                continue
            }
            let tombstone = try Tombstone(recordID: id, revision: record.revision, deleted: now).sealed(vaultID: vault.vaultID, key: keys.recordKey)
            try fileSystem.writeAtomically(tombstone, to: id.hex, in: shard, via: opened.temporary)
        }
    }

    private func tombstoneShard(of id: RecordID, in opened: OpenContainer, create: Bool) throws -> Directory {
        try fileSystem.directory(
            GroupContainer.shardName(of: id), in: opened.directory(GroupContainer.tombstonesName, create: create), create: create)
    }

    // MARK: Merging

    /// The three sides of every path that changed on either side since the last sync.
    private struct PathSides {
        var base: String?
        var local: String?
        var remote: String?
    }

    /// Merges `remote` into this device's `head`, from their state at `base` (the last sync).
    /// - Returns: the new head, or `nil` when a write on this device got in between (start again).
    private func merge(head: String?, remote: String, base: String?) throws -> String? {
        let trees = try git.trees(of: [remote] + [head, base].compactMap { $0 })
        let remoteTree = trees[0]
        let empty = head == nil || base == nil ? try git.emptyTree : ""
        let headTree = head == nil ? empty : trees[1]
        let baseTree = base == nil ? empty : trees.last!

        var sides: [SyncedPath: PathSides] = [:]
        for change in try git.changes(from: baseTree, to: remoteTree) {
            guard let path = SyncedPath(change.path) else { throw refusal(change.path, "is not part of a Coffer vault") }
            guard change.newObject == nil || change.newMode == SyncedPath.fileMode else {
                throw refusal(change.path, "is not a plain file (git mode \(change.newMode))")
            }
            sides[path] = PathSides(base: change.oldObject, local: change.oldObject, remote: change.newObject)
        }
        for change in try git.changes(from: baseTree, to: headTree) {
            guard let path = SyncedPath(change.path) else { continue }  // checked when it was committed
            if sides[path] != nil {
                sides[path]!.local = change.newObject
            } else {
                sides[path] = PathSides(base: change.oldObject, local: change.newObject, remote: change.oldObject)
            }
        }
        // A record id touched on one path (its record or its tombstone) needs the other path too;
        // unchanged on both sides, it is the same in all three trees.
        var missing: [SyncedPath] = []
        for path in sides.keys {
            switch path {
            case .record(let id) where sides[.tombstone(id)] == nil: missing.append(.tombstone(id))
            case .tombstone(let id) where sides[.record(id)] == nil: missing.append(.record(id))
            default: break
            }
        }
        let unchanged = try missing.isEmpty || headTree == empty ? [:] : git.objects(in: headTree, under: [SyncedPath.recordsDirectory, SyncedPath.tombstonesDirectory])
        for path in missing {
            let object = unchanged[path.path]
            sides[path] = PathSides(base: object, local: object, remote: object)
        }

        let objects = sides.values.flatMap { [$0.base, $0.local, $0.remote].compactMap { $0 } }
        let blobs = try git.blobs(objects, limit: RecordEnvelope.maximumFileLength)
        var inputs: [RecordID: MergeInput] = [:]
        var header: PathSides?
        var seal: PathSides?
        for (path, side) in sides {
            switch path {
            case .header: header = side
            case .headerSeal: seal = side
            case .record(let id):
                var input = inputs[id] ?? MergeInput(id: id)
                input.base = try side.base.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.local = try side.local.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.remote = try side.remote.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: true) }
                inputs[id] = input
            case .tombstone(let id):
                var input = inputs[id] ?? MergeInput(id: id)
                input.baseTombstone = side.base
                input.localTombstone = try side.local.map { try tombstoneVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.remoteTombstone = try side.remote.map { try tombstoneVersion($0, blobs, id: id, path: path, fromRemote: true) }
                inputs[id] = input
            }
        }
        // What this merge finds about the remote replaces what an earlier round found (changes
        // applied in an earlier round stay counted: they happened).
        (report.remoteBehind, report.refusedPutBack) = (0, 0)
        let headerPlan = try planHeader(header: header, seal: seal, blobs: blobs, remoteTree: remoteTree)
        let decisions = inputs.mapValues(SyncMerge.decide)
        options.stepObserver?(.planned)
        return try apply(decisions, inputs: inputs, header: headerPlan, head: head, remote: remote, remoteTree: remoteTree)
    }

    /// The remote's header and seal to write, over the header this device committed.
    private struct HeaderPlan {
        let header: [UInt8]
        let seal: [UInt8]
        /// What the container must still hold when they are written (a `coffer passwd` since
        /// the plan: start again rather than undo it).
        let replacing: [UInt8]
    }

    /// What becomes of the header: `nil` keeps this device's.
    private func planHeader(header: PathSides?, seal: PathSides?, blobs: [String: [UInt8]], remoteTree: String) throws -> HeaderPlan? {
        guard header != nil || seal != nil else { return nil }
        let remoteFiles = try header?.remote == nil || seal?.remote == nil
            ? git.objects(in: remoteTree, under: [GroupContainer.headerName, GroupContainer.headerSealName]) : [:]
        guard let remoteHeaderObject = header?.remote ?? remoteFiles[GroupContainer.headerName] else {
            throw refusal(GroupContainer.headerName, "is missing: the remote holds no vault")
        }
        let remoteHeaderBytes = try blobs[remoteHeaderObject] ?? git.blobs([remoteHeaderObject], limit: VaultHeader.length)[remoteHeaderObject] ?? []
        let remoteHeader = try mappingErrors(file: "the remote's " + GroupContainer.headerName) {
            try VaultHeader.decode(remoteHeaderBytes, policy: vault.configuration.kdfPolicy)
        }
        guard remoteHeader.vaultID == vault.vaultID else {
            throw refusal(GroupContainer.headerName, "belongs to another vault (id \(remoteHeader.vaultID)); nothing was merged")
        }
        let localHeaderObject = header?.local ?? header?.base ?? remoteHeaderObject
        guard let remoteSealObject = seal?.remote ?? remoteFiles[GroupContainer.headerSealName] else {
            if localHeaderObject == remoteHeaderObject { return nil }
            throw refusal(GroupContainer.headerSealName, "is missing: a changed header must be sealed with the vault key")
        }
        let remoteSeal = try blobs[remoteSealObject] ?? git.blobs([remoteSealObject], limit: HeaderSeal.fileLength)[remoteSealObject] ?? []
        guard HeaderSeal.isValid(remoteSeal, for: remoteHeaderBytes, vaultID: vault.vaultID, key: keys.recordKey) else {
            if localHeaderObject == remoteHeaderObject && seal?.local != seal?.remote { return nil }  // keep our own seal
            throw refusal(GroupContainer.headerName, "is not sealed by this vault's key (vault.seal); nothing was merged")
        }
        if localHeaderObject == remoteHeaderObject {
            return seal?.local == seal?.remote ? nil : HeaderPlan(header: remoteHeaderBytes, seal: remoteSeal, replacing: remoteHeaderBytes)
        }
        let localBytes = try blobs[localHeaderObject] ?? git.blobs([localHeaderObject], limit: VaultHeader.length)[localHeaderObject] ?? []
        let localChanged = header != nil && header?.local != header?.base
        if localChanged {
            // The master password changed on both sides: one header must win, the same on
            // every device.
            report.headerConflict = true
            guard try BLAKE2b.hash(localBytes).lexicographicallyPrecedes(try BLAKE2b.hash(remoteHeaderBytes)) else { return nil }
        }
        report.headerAdopted = true
        return HeaderPlan(header: remoteHeaderBytes, seal: remoteSeal, replacing: localBytes)
    }

    private func recordVersion(_ object: String, _ blobs: [String: [UInt8]], id: RecordID, path: SyncedPath, fromRemote: Bool) throws -> RecordVersion {
        let bytes = blobs[object] ?? []
        let record = try open(record: bytes, id: id, path: path.path, fromRemote: fromRemote)
        return RecordVersion(object: object, bytes: bytes, record: record, hash: try ciphertextHash(bytes))
    }

    private func tombstoneVersion(_ object: String, _ blobs: [String: [UInt8]], id: RecordID, path: SyncedPath, fromRemote: Bool) throws -> TombstoneVersion {
        let bytes = blobs[object] ?? []
        let tombstone = try authenticated(path.path, fromRemote: fromRemote) {
            try Tombstone.open(bytes, id: id, vaultID: vault.vaultID, key: keys.recordKey)
        }
        return TombstoneVersion(object: object, bytes: bytes, tombstone: tombstone, hash: try ciphertextHash(bytes))
    }

    private func open(record bytes: [UInt8], id: RecordID, path: String, fromRemote: Bool) throws -> Record {
        try authenticated(path, fromRemote: fromRemote) { try RecordSealing.open(bytes, id: id, vaultID: vault.vaultID, key: keys.recordKey) }
    }

    /// Opens a fetched file; any failure is the remote's file refused (exit 65), naming it.
    private func authenticated<Result>(_ path: String, fromRemote: Bool, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            let failure: String = switch error {
            case CryptoError.authenticationFailed: "fails authentication (altered, moved, or from another vault)"
            default: "\(error)"
            }
            throw fromRemote ? refusal(path, failure + "; nothing was merged") : VaultError.corrupt(file: path, reason: failure)
        }
    }

    private func refusal(_ path: String, _ reason: String) -> VaultError {
        .corrupt(file: "the remote's " + path, reason: reason)
    }

    // MARK: Applying

    /// Writes the merged state under the vault's lock and commits it: remote tombstones first
    /// (a crash then leaves a record beside a tombstone, which the next merge settles), the
    /// records in one journaled transaction (the index follows), then tombstones an edit
    /// outlived, the header, and the merge commit.
    private func apply(
        _ decisions: [RecordID: MergeDecision], inputs: [RecordID: MergeInput], header: HeaderPlan?,
        head: String?, remote: String, remoteTree: String
    ) throws -> String? {
        try vault.exclusiveTransaction { opened -> String? in
            guard try localStateIsUnchanged(inputs, in: opened) else { return nil }
            if let header, try fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length) != header.replacing {
                return nil
            }
            let now = RecordCoding.wholeSeconds(Date())
            var staged: [SyncedPath] = []
            var changes: [RecordChange] = []
            let index = try vault.identityIndex(opened)
            let manifest = try index.readManifest()
            for id in decisions.keys.sorted() {
                let decision = decisions[id]!, input = inputs[id]!
                if decision.remoteStale { report.remoteBehind += 1 }
                if decision.putBack { report.refusedPutBack += 1 }
                if decision.tombstone == .remote, let tombstone = input.remoteTombstone, tombstone.object != input.localTombstone?.object {
                    try fileSystem.writeAtomically(tombstone.bytes, to: id.hex, in: tombstoneShard(of: id, in: opened, create: true), via: opened.temporary)
                    staged.append(.tombstone(id))
                }
                // Ranks a person gave this device's version carry over (a record new here has none).
                let previous = input.local == nil ? [] : try vault.entries(of: id, index: index, manifest: manifest)
                switch decision.record {
                case .local:
                    break
                case .remote:
                    guard let version = input.remote else { continue }
                    changes.append(RecordChange(
                        id: id, sealed: version.bytes, revision: version.record.revision,
                        entries: Vault.indexEntries(of: version.record, previous: previous), isAdd: input.local == nil))
                    if input.local == nil { report.incoming.added += 1 } else { report.incoming.updated += 1 }
                    staged.append(.record(id))
                case .merged:
                    guard let local = input.local, let remote = input.remote else { continue }
                    let (merged, loser) = SyncMerge.resolve(local, remote, now: now)
                    changes.append(RecordChange(
                        id: id, sealed: try RecordSealing.seal(merged, vaultID: vault.vaultID, key: keys.recordKey),
                        revision: merged.revision, entries: Vault.indexEntries(of: merged, previous: previous)))
                    report.conflicts += 1
                    report.incoming.updated += 1
                    staged.append(.record(id))
                    if let loser {
                        let copy = SyncMerge.conflictCopy(of: loser, id: try RecordID.random(), now: now)
                        changes.append(RecordChange(
                            id: copy.id, sealed: try RecordSealing.seal(copy, vaultID: vault.vaultID, key: keys.recordKey),
                            revision: copy.revision, entries: Vault.indexEntries(of: copy)))
                        report.conflictCopies += 1
                        staged.append(.record(copy.id))
                    }
                case .absent:
                    guard input.local != nil else { continue }
                    changes.append(RecordChange(id: id, sealed: nil, revision: 0, entries: []))
                    report.incoming.deleted += 1
                    staged.append(.record(id))
                }
            }
            if !changes.isEmpty { try vault.commit(changes, in: opened) }
            for (id, decision) in decisions where decision.tombstone == .none && inputs[id]?.localTombstone != nil {
                try fileSystem.removeFile(id.hex, in: tombstoneShard(of: id, in: opened, create: false))
                staged.append(.tombstone(id))
            }
            if let header {
                try fileSystem.writeAtomically(header.seal, to: GroupContainer.headerSealName, in: opened.root, via: opened.temporary)
                try fileSystem.writeAtomically(header.header, to: GroupContainer.headerName, in: opened.root, via: opened.temporary)
                vault.adoptHeader(try VaultHeader.decode(header.header, policy: vault.configuration.kdfPolicy))
                staged += [.headerSeal, .header]
            }
            try git.stage(staged.map(\.path))
            let tree = try git.writeTree()
            let commit = tree == remoteTree
                ? remote
                : try git.commitTree(tree, parents: (head.map { [$0] } ?? []) + [remote], message: Self.message(staged.count, merge: true))
            try git.updateRef(Git.branch, to: commit, from: head)
            return commit
        }
    }

    /// Whether every record and tombstone the merge decided on is still what the plan read
    /// (a `coffer add` or `edit` may have run since the local commit).
    private func localStateIsUnchanged(_ inputs: [RecordID: MergeInput], in opened: OpenContainer) throws -> Bool {
        for (id, input) in inputs {
            let record = try? vault.readRecordFile(id, in: opened)
            let tombstone = try? fileSystem.readFile(id.hex, in: tombstoneShard(of: id, in: opened, create: false), limit: Tombstone.fileLength)
            guard record == input.local?.bytes, tombstone == input.localTombstone?.bytes else {
                return false
            }
        }
        return true
    }

    /// What the push gives the remote: records added, changed and removed between its commit
    /// and this device's.
    private func outgoingChanges(from remote: String?, to head: String) throws -> SyncCounts {
        var counts = SyncCounts()
        guard remote != head else { return counts }
        let trees = try git.trees(of: [head] + (remote.map { [$0] } ?? []))
        for change in try git.changes(from: remote == nil ? git.emptyTree : trees[1], to: trees[0]) {
            guard case .record = SyncedPath(change.path) else { continue }
            switch (change.oldObject, change.newObject) {
            case (nil, _?): counts.added += 1
            case (_?, nil): counts.deleted += 1
            default: counts.updated += 1
            }
        }
        return counts
    }
}
