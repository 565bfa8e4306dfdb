import CofferFormat
import FoundationEssentials

/// One `sync` of an unlocked vault with its remote (SPEC.md §15.4): commit this device's changes,
/// fetch, authenticate and merge what the remote changed, push.
///
/// git only stores and carries: every fetched file is opened with the vault's keys before any of
/// it is used, the merge is decided by `SyncMerge`, and the merged records reach the container
/// through the vault's own journaled transaction, so the identity index is rebuilt by Coffer for
/// exactly the records that changed and no git merge ever touches a sealed file.
package final class SyncSession {
    package let vault: Vault
    /// The vault's keys; a team sync that takes a rotated key from the remote replaces them.
    package var keys: VaultKeys
    /// The keys a file the remote added must be sealed under: `keys`, except in a team whose
    /// remote has not yet seen this device's key rotation (SPEC.md §16.5).
    package var remoteKeys: VaultKeys
    package let git: Git
    package let options: SyncOptions
    /// What the vault's kind adds to each round (a team's membership), if anything.
    let layer: (any SyncLayer)?
    /// What this sync did so far (rounds add to it).
    package var report = SyncReport()
    static let attempts = 10
    static let packedFirstCommitMinimum = 256
    /// Records of one ledger shard above which `checkOwnChanges` decodes the shard whole and
    /// opens them on every core.
    static let wholeLedgerShardMinimum = 32
    /// What these rounds' pushes met: the lock file of each rejection for a held lock (`nil`
    /// for one that lost a race), and every remote commit fetched. A lock is stale only when
    /// every push met it and the remote never moved: on a busy remote others push between
    /// the rounds, and a lock that fails one push is theirs.
    private var rejections: [String?] = []
    private var remoteHeadsSeen: Set<String> = []
    /// The records the last commit checked here added, changed and removed, between its trees.
    private var ownChanges: (from: String, to: String, counts: SyncCounts)?
    package var fileSystem: FileSystem { vault.fileSystem }

    init(vault: Vault, options: SyncOptions, layer: (any SyncLayer)?) throws(VaultError) {
        self.vault = vault
        self.layer = layer
        keys = try vault.keys()
        remoteKeys = keys
        git = Git(container: vault.container.path, environment: options.environment, deviceState: vault.deviceState)
        self.options = options
    }

    /// Runs the sync; `adoptingRemote` is a clone's first one (nothing local to commit).
    func run(adoptingRemote: Bool = false) throws -> SyncReport {
        let started = ContinuousClock.now
        do {
            guard git.exists, try git.remoteURL() != nil else { throw SyncError.notConfigured(container: vault.container.path) }
            try withSyncLock {
                git.removeStaleLocks()
                do {
                    try rounds(adoptingRemote: adoptingRemote)
                } catch SyncError.damagedRepository where !adoptingRemote {
                    // A power loss left git's objects or index empty: the sealed files are the
                    // vault and git only carries them, so a new repository whose first sync
                    // merges by content with the remote loses nothing (SPEC.md §15.4).
                    try rebuildRepository()
                    do {
                        try rounds(adoptingRemote: false)
                    } catch SyncError.damagedRepository(let command, let message) where ["fetch", "push"].contains(command) {
                        throw SyncError.damagedRemote(message: message)
                    }
                }
            }
        } catch let error as SyncError {
            throw error
        } catch let error as any SyncRefusal {
            throw error
        } catch {
            try mappingErrors(file: vault.container.path) { throw error }
        }
        report.gitTime = git.elapsed
        report.totalTime = ContinuousClock.now - started
        return report
    }

    enum RoundOutcome { case done, again, waitForLease }

    /// Rounds until one is done. A push loses the race when another device pushed since the
    /// fetch; so does a merge when a write on this device touched a merged record: start again,
    /// after a random pause that grows, so that two devices do not keep colliding. A round that
    /// waits for another device's membership change does not count.
    private func rounds(adoptingRemote: Bool) throws {
        var round = 0
        rejections = []
        remoteHeadsSeen = []
        while round < Self.attempts {
            switch try attempt(adoptingRemote: adoptingRemote) {
            case .done: return
            case .again:
                Pause.sleep(randomlyBelow: 50_000 << min(round, 4))
                round += 1
            case .waitForLease:
                Pause.sleep(for: .milliseconds(250))
            }
        }
        // Every round lost to the same lock while the remote never moved: a lock that outlived
        // them all (seconds, where a push holds it for milliseconds) and that nobody got past
        // was left by a git that was stopped there.
        if rejections.count == Self.attempts, let lock = rejections.first ?? nil, rejections.allSatisfy({ $0 == lock }), remoteHeadsSeen.count <= 1 {
            throw SyncError.remoteLocked(lock: lock)
        }
        throw SyncError.outpaced(rounds: Self.attempts)
    }

    /// Moves the damaged `.git` out of the way and makes a new repository for the pinned remote
    /// (the damaged one is removed: everything in it is sealed, and none of it is needed).
    private func rebuildRepository() throws {
        guard let remote = try git.remoteURL() else { throw SyncError.notConfigured(container: vault.container.path) }
        let container = try fileSystem.openDirectory(atPath: vault.container.path, check: .anyOwner)
        let aside = ".git-damaged-" + Hex.encode(try SecureRandom.bytes(4))
        try fileSystem.rename(".git", in: container, to: aside, in: container)
        try git.initialize()
        try git.setRemote(remote)
        fileSystem.removeTree(aside, in: container)
        report.repairedRepository = true
    }


    /// One round.
    private func attempt(adoptingRemote: Bool) throws -> RoundOutcome {
        if !adoptingRemote { try commitLocalChanges() }
        options.stepObserver?(.committed)
        try git.fetch()
        options.stepObserver?(.fetched)
        // Between the fetch and the push another device may push; the fewer git calls in
        // between, the more often this device wins that race.
        let refs = try git.syncRefs()
        if let remote = refs.remote { remoteHeadsSeen.insert(remote) }
        if try layer?.mustWait(forLease: refs.lease, self) == true { return .waitForLease }
        let (remote, synced) = (refs.remote, refs.synced)
        var head = refs.head
        // The remote is still where this device left it: its state is already merged here.
        let alreadyMerged = remote == synced || remote == head
        if let remote, !alreadyMerged {
            if let layer { try layer.willMerge(remote: remote, self) } else { try refuseLayerFiles(remote: remote) }
        }
        if let remote, !alreadyMerged, try head.map({ try !git.isAncestor(remote, of: $0) }) ?? true {
            guard let mergeCommit = try merge(head: head, remote: remote, base: synced) else { return .again }
            head = mergeCommit
            // The remote commit just merged is this device's base from now on, pushed or not: a
            // push rejected next would otherwise have the round after it merge against the old
            // base, and what came from this remote would count as this device's own edits
            // (false conflicts that pushed another member's item back at an older password).
            try git.setRefs([Git.syncedRef], to: remote)
        }
        // What the layer re-sealed after the merge (a team's files under a retired key) is
        // committed before anything is pushed.
        if try layer?.didMerge(self) == true {
            try commitLocalChanges()
            head = try git.syncRefs().head
        }
        options.stepObserver?(.merged)
        guard var head else {  // an empty vault and an empty remote
            report.remoteHistory = .empty
            return .done
        }
        if options.push, head != remote, layer?.squashesPushes == true { head = try squashed(head, onto: remote) }
        report.head = head
        if options.push, head != remote {
            let pushed = try git.push(head)
            guard pushed == .pushed else {
                if case .rejected(let lock) = pushed { rejections.append(lock) }
                return .again
            }
            report.pushed = true
            try layer?.didPush(self)
            try git.setRefs([Git.remoteBranch, Git.syncedRef], to: head)
            options.stepObserver?(.pushed)
        } else if let remote {
            try git.setRefs([Git.syncedRef], to: remote)
        }
        // Reporting only, once the race is over.
        report.remoteHistory = try history(synced: synced, remote: remote)
        report.outgoing = try outgoingChanges(from: remote, to: head)
        return .done
    }

    /// The unpushed commits as one commit on top of the remote's, holding the tree `head` holds
    /// (for a layer that `squashesPushes`): in a team, the commits made before this sync
    /// re-sealed them (under a key a removal retired, SPEC.md §16.5) are never pushed, so no
    /// object in the remote's history written after a removal opens under a key the removed
    /// member holds.
    private func squashed(_ head: String, onto remote: String?) throws -> String {
        let tree = try git.tree(of: head)
        if let remote, try git.parents(of: head) == [remote] { return head }
        let changes = try git.forEachChange(from: remote.map { try git.tree(of: $0) } ?? git.emptyTree, to: tree) { _ in }
        let commit = try git.commitTree(tree, parents: remote.map { [$0] } ?? [], message: Self.message(changes))
        try git.updateRef(Git.branch, to: commit, from: head)
        return commit
    }

    /// A vault without a layer (a personal one) takes no layer's file: a remote holding a
    /// team's key file is another kind of vault, and nothing of it is merged.
    private func refuseLayerFiles(remote: String) throws {
        let name = GroupContainer.teamKeysName
        guard try git.objects(in: git.tree(of: remote), under: [name])[name] != nil else { return }
        throw refusal(name, "is a team's key file, and this vault is personal; nothing was merged")
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
    /// With a baseline of the last commit (`SyncBaseline`) only the paths it names are staged;
    /// without one, everything is (`git add -A`).
    private func commitLocalChanges() throws {
        // Staged once without the lock, so that the locked pass only re-reads what changed
        // meanwhile: the first sync of 10,000 records writes 10,000 git objects (2.8 s here),
        // and fills would wait for all of it. A file torn or removed by a write in between is
        // re-read by the second pass; its first object is never referenced, so never pushed.
        let unlockedHead = try git.syncRefs().head
        if unlockedHead == nil { try packForFirstCommit() }
        if try unlockedHead.map({ validBaseline(for: try git.tree(of: $0)) }) == nil { _ = try? git.stageAll() }
        try vault.exclusiveTransaction { opened in
            try vault.recover(vault.identityIndex(opened))
            let head = try git.syncRefs().head
            try sealHeaderIfNeeded(opened)
            let index = try vault.identityIndex(opened)
            let headTree = try head.map { try git.tree(of: $0) }
            let baseline = headTree.flatMap { validBaseline(for: $0) }
            if let headTree, let baseline,
               let paths = try pathsChanged(since: baseline, manifest: index.readManifest(), index: index, in: opened) {
                let deleted = try deletedRecords(among: paths, in: headTree, opened)
                try writeTombstones(for: deleted, in: opened)
                let staged = Set(paths).union(deleted.map { .tombstone($0.0) })
                try git.stage(staged.map(\.path))
                report.stagedPaths = staged.count
            } else {
                if let head { try writeTombstones(for: deletedRecords(since: head), in: opened) }
                try git.stageAll()
                report.stagedPaths = nil
            }
            let tree = try git.writeTree()
            if tree != headTree {
                let changes = try checkOwnChanges(from: headTree ?? git.emptyTree, to: tree, in: opened)
                let commit = try git.commitTree(tree, parents: head.map { [$0] } ?? [], message: Self.message(changes))
                try git.updateRef(Git.branch, to: commit, from: head)
            }
            saveBaseline(tree: tree, manifest: try index.readManifest(), index: index, in: opened)
        }
    }

    /// Before a repository's first commit, every record and tombstone file into one pack (see
    /// `Git.pack`), without the lock: it only stores objects, and `git add` under the lock still
    /// hashes every file as it is then. Attachments are left to `git add`, which streams them.
    /// A vault of fewer than `packedFirstCommitMinimum` such files is left to `git add` alone: a
    /// few hundred loose objects cost less than another git process.
    private func packForFirstCommit() throws {
        let opened = try vault.openContainer()
        var files: [(String, Directory, Int)] = []
        for (name, limit) in [(GroupContainer.recordsName, RecordEnvelope.maximumFileLength), (GroupContainer.tombstonesName, Tombstone.fileLength)] {
            guard let parent = try? fileSystem.directoryIfPresent(name, in: opened.root) else { continue }
            for shard in (try? fileSystem.contents(of: parent)) ?? [] {
                guard let directory = try? fileSystem.directory(shard, in: parent) else { continue }
                for file in (try? fileSystem.contents(of: directory)) ?? [] where (try? RecordID(hex: file)) != nil {
                    files.append((file, directory, limit))
                }
            }
        }
        guard files.count >= Self.packedFirstCommitMinimum else { return }
        try git.pack(count: files.count) { index in
            try? fileSystem.readFile(files[index].0, in: files[index].1, limit: files[index].2)
        }
    }

    /// What this device is about to commit must be what its vault holds: every path a shared
    /// one and a plain file, every record the one its ledger names (authentic, current), every
    /// tombstone authentic. A file planted in a container others could write, or damaged here,
    /// is refused before it can reach the remote and make every other device refuse the sync.
    /// - Returns: how many paths changed between the trees.
    private func checkOwnChanges(from oldTree: String, to newTree: String, in opened: OpenContainer) throws -> Int {
        var named: [AttachmentID: (Attachment, Record)] = [:]
        var attachmentFiles: [(AttachmentID, String)] = []
        var recordFiles: [RecordID] = []  // a million paths as strings cost a first sync 100 MB
        var counts = SyncCounts()
        let count = try git.forEachChange(from: oldTree, to: newTree) { change in
            counts.count(change)
            guard change.newObject != nil else { return }
            let file = vault.container.path + "/" + change.path
            guard let path = SyncedPath(change.path), change.newMode == SyncedPath.fileMode else {
                throw VaultError.corrupt(
                    file: file,
                    reason: "is not a file of a vault (planted, or left by another program); nothing was synced ('coffer verify' lists such entries)")
            }
            do {
                switch path {
                case .record(let id):
                    recordFiles.append(id)  // judged below, on every core
                case .attachment(let id):
                    attachmentFiles.append((id, file))  // judged below, against the record that names it
                case .tombstone(let id):
                    let bytes = try fileSystem.readFile(id.hex, in: tombstoneShard(of: id, in: opened, create: false), limit: Tombstone.fileLength)
                    _ = try keys.openingWithRecordKey { try Tombstone.open(bytes, id: id, vaultID: vault.vaultID, key: $0) }
                case .header, .headerSeal:
                    break  // read by this vault to unlock it, and sealed just now
                case .teamKeys:
                    // Only a team has one (its layer judges it).
                    guard let layer else { throw VaultError.corrupt(file: file, reason: "is a team's key file in a personal vault") }
                    try layer.checkOwnFile(path, file: file, self)
                }
            } catch let error as VaultError {
                throw error
            } catch {
                throw VaultError.corrupt(file: file, reason: "fails authentication (planted or damaged); nothing was synced")
            }
        }
        // Every record opened and checked against its ledger entry, one ledger shard at a time:
        // each shard read once (decoded whole for many of its records, every shard in a first
        // sync; searched for a few), and the records of a large group on every core. A first
        // sync of a million records decrypts a million files (69 s on one core), and holding
        // the whole ledger at once cost it hundreds of MB. Only records with attachments are kept.
        let index = try vault.identityIndex(opened)
        let manifest = try index.readManifest()
        var start = recordFiles.startIndex
        while start < recordFiles.endIndex {
            // diff-tree lists paths in order, so a shard's records are together (were they not,
            // a shard would only be read once more).
            let slot = IndexManifest.ledgerSlot(of: recordFiles[start])
            let end = recordFiles[start...].firstIndex { IndexManifest.ledgerSlot(of: $0) != slot } ?? recordFiles.endIndex
            let group = recordFiles[start..<end]
            let many = group.count > Self.wholeLedgerShardMinimum
            var ledger: [RecordID: LedgerEntry] = [:]
            if let payload = try index.ledgerPayload(inSlot: slot, of: manifest) {
                if many {
                    for entry in try IndexShardCoding.decodeLedger(payload) { ledger[entry.recordID] = entry }
                } else {
                    for id in group { ledger[id] = try IndexShardCoding.ledgerEntry(for: id, in: payload) }
                }
            }
            func check(_ position: Int) throws -> [(Attachment, Record)] {
                let id = group[group.startIndex + position]
                do {
                    let record = try vault.checkedRecord(id, ledger: ledger[id], keys: keys, in: opened)
                    return record.attachments.map { ($0, record) }
                } catch let error as VaultError {
                    throw error
                } catch {
                    throw VaultError.corrupt(
                        file: vault.container.path + "/" + SyncedPath.record(id).path, reason: "fails authentication (planted or damaged); nothing was synced")
                }
            }
            let checked = many ? try concurrentMap(group.count, check) : try (0..<group.count).map(check)
            for (attachment, record) in checked.joined() { named[attachment.id] = (attachment, record) }
            start = end
        }
        // An attachment file enters the repository with the record that names it (the two are
        // written in one transaction), whole and authentic under that record's key.
        for (id, file) in attachmentFiles {
            guard let (attachment, record) = named[id] else {
                throw VaultError.corrupt(file: file, reason: "is named by no item this commit adds or changes (planted); nothing was synced")
            }
            try vault.readAttachment(attachment, of: record) { _ in }
        }
        ownChanges = (oldTree, newTree, counts)
        return count
    }

    /// A commit message that counts and names nothing (SPEC.md §15.5).
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

    /// Records committed in `head` whose files are gone now, with their objects (`git
    /// diff-index`, which stats every file).
    private func deletedRecords(since head: String) throws -> [(RecordID, String)] {
        try git.deletedFiles(since: head, under: SyncedPath.recordsDirectory).compactMap { change -> (RecordID, String)? in
            guard case .record(let id) = SyncedPath(change.path), let object = change.oldObject else { return nil }
            return (id, object)
        }
    }

    /// The records among `paths` committed in `tree` whose files are gone now.
    private func deletedRecords(among paths: [SyncedPath], in tree: String, _ opened: OpenContainer) throws -> [(RecordID, String)] {
        let records = try opened.directory(GroupContainer.recordsName)
        let gone = try paths.compactMap { path throws -> String? in
            guard case .record(let id) = path else { return nil }
            let shard = try fileSystem.directoryIfPresent(GroupContainer.shardName(of: id), in: records)
            return try shard.flatMap { try fileSystem.status(id.hex, in: $0) } == nil ? path.path : nil
        }
        guard !gone.isEmpty else { return [] }
        return try git.objects(in: tree, under: gone).compactMap { path, object in
            guard case .record(let id) = SyncedPath(path) else { return nil }
            return (id, object)
        }
    }

    /// A tombstone for each record file committed before and gone now, carrying the revision the
    /// commit holds (SPEC.md §15.2). One already there for that revision or a later one (a
    /// remote deletion the merge wrote) is kept; an older one (left by a crash after an edit
    /// outlived it) is replaced, or the deletion would lose to that edit's revision.
    private func writeTombstones(for deleted: [(RecordID, String)], in opened: OpenContainer) throws {
        guard !deleted.isEmpty else { return }
        let blobs = try git.blobs(deleted.map(\.1), limit: RecordEnvelope.maximumFileLength)
        let now = RecordCoding.wholeSeconds(Date())
        for (id, object) in deleted {
            let shard = try tombstoneShard(of: id, in: opened, create: true)
            let record = try open(record: blobs[object] ?? [], id: id, path: SyncedPath.record(id).path, fromRemote: false)
            if let existing = try? fileSystem.readFile(id.hex, in: shard, limit: Tombstone.fileLength),
               let kept = try? keys.openingWithRecordKey({ try Tombstone.open(existing, id: id, vaultID: vault.vaultID, key: $0) }), kept.revision >= record.revision {
                continue
            }
            let tombstone = try Tombstone(recordID: id, revision: record.revision, deleted: now).sealed(vaultID: vault.vaultID, key: keys.recordKey)
            try fileSystem.writeAtomically(tombstone, to: id.hex, in: shard, via: opened.temporary)
        }
    }

    /// `tombstones/<xx>/` of record `id`.
    func tombstoneShard(of id: RecordID, in opened: OpenContainer, create: Bool) throws -> Directory {
        try fileSystem.directory(
            GroupContainer.shardName(of: id), in: opened.directory(GroupContainer.tombstonesName, create: create), create: create)
    }

    /// What the push gives the remote: records added, changed and removed between its commit
    /// and this device's.
    private func outgoingChanges(from remote: String?, to head: String) throws -> SyncCounts {
        var counts = SyncCounts()
        guard remote != head else { return counts }
        let trees = try git.trees(of: [head] + (remote.map { [$0] } ?? []))
        let from = remote == nil ? try git.emptyTree : trees[1]
        // This device's commit on top of the remote's: counted when it was checked (a walk of
        // every changed tree less, a tenth of a second at a million records).
        if let own = ownChanges, own.from == from, own.to == trees[0] { return own.counts }
        try git.forEachChange(from: from, to: trees[0]) { counts.count($0) }
        return counts
    }
}