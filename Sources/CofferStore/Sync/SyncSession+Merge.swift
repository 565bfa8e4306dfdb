import CofferFormat
import FoundationEssentials

/// Reading and deciding a merge (SPEC.md §15.3): every changed file of the three states,
/// authenticated before anything is written.
extension SyncSession {
    /// The three sides of every path that changed on either side since the last sync.
    struct PathSides {
        var base: String?
        var local: String?
        var remote: String?
    }

    /// Merges `remote` into this device's `head`, from their state at `base` (the last sync).
    /// - Returns: the new head, or `nil` when a write on this device got in between (start again).
    func merge(head: String?, remote: String, base: String?) throws -> String? {
        let trees = try git.trees(of: [remote] + [head, base].compactMap { $0 })
        let remoteTree = trees[0]
        let empty = head == nil || base == nil ? try git.emptyTree : ""
        let headTree = head == nil ? empty : trees[1]
        let baseTree = base == nil ? empty : trees.last!

        var sides: [SyncedPath: PathSides] = [:]
        // Attachment files the remote added: taken when a merged record names them (apply).
        var remoteAttachments: [AttachmentID: String] = [:]
        // Each change as git writes it: another device's first sync of a million records
        // arrives here as a million changes, never held as values.
        try git.forEachChange(from: baseTree, to: remoteTree) { change in
            guard let path = SyncedPath(change.path) else { throw refusal(change.path, "is not part of a Coffer vault") }
            guard change.newObject == nil || change.newMode == SyncedPath.fileMode else {
                throw refusal(change.path, "is not a plain file (git mode \(change.newMode))")
            }
            if case .attachment(let id) = path {
                if let object = change.newObject { remoteAttachments[id] = object }
                return
            }
            sides[path] = PathSides(base: change.oldObject, local: change.oldObject, remote: change.newObject)
        }
        try git.forEachChange(from: baseTree, to: headTree) { change in
            guard let path = SyncedPath(change.path) else { return }  // checked when it was committed
            if case .attachment = path { return }
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

        // The team's key file was judged and taken before the merge (SPEC.md §16.5).
        sides[.teamKeys] = nil
        let objects = sides.values.flatMap { [$0.base, $0.local, $0.remote].compactMap { $0 } }
        let blobs = try git.blobs(objects, limit: RecordEnvelope.maximumFileLength)
        var inputs: [RecordID: MergeInput] = [:]
        var header: PathSides?
        var seal: PathSides?
        for (path, side) in sides {
            switch path {
            case .header: header = side
            case .headerSeal: seal = side
            case .teamKeys, .attachment: break
            case .record(let id):
                var input = inputs[id] ?? MergeInput(id: id)
                input.base = try side.base.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.local = try side.local.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.remote = try side.remote.map { try recordVersion($0, blobs, id: id, path: path, fromRemote: true, isNew: $0 != side.base) }
                inputs[id] = input
            case .tombstone(let id):
                var input = inputs[id] ?? MergeInput(id: id)
                input.baseTombstone = side.base
                input.localTombstone = try side.local.map { try tombstoneVersion($0, blobs, id: id, path: path, fromRemote: false) }
                input.remoteTombstone = try side.remote.map { try tombstoneVersion($0, blobs, id: id, path: path, fromRemote: true, isNew: $0 != side.base) }
                inputs[id] = input
            }
        }
        // What this merge finds about the remote replaces what an earlier round found (changes
        // applied in an earlier round stay counted: they happened).
        (report.remoteBehind, report.refusedPutBack) = (0, 0)
        let headerPlan = try planHeader(header: header, seal: seal, blobs: blobs, remoteTree: remoteTree)
        let decisions = inputs.mapValues(SyncMerge.decide)
        options.stepObserver?(.planned)
        return try apply(
            decisions, inputs: inputs, header: headerPlan, head: head, remote: remote, remoteTree: remoteTree, remoteAttachments: remoteAttachments)
    }

    /// The remote's header and seal to write, over the header this device committed.
    struct HeaderPlan {
        let header: [UInt8]
        let seal: [UInt8]
        /// What the container must still hold when they are written (a `coffer passwd` since
        /// the plan: start again rather than undo it).
        let replacing: [UInt8]
    }

    /// What becomes of the header: `nil` keeps this device's.
    func planHeader(header: PathSides?, seal: PathSides?, blobs: [String: [UInt8]], remoteTree: String) throws -> HeaderPlan? {
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
        // The remote's seal is judged whenever the remote changed it or the header (SPEC.md
        // §15.3): a seal the remote replaced or removed must be authentic even beside a header
        // that did not change.
        let remoteChangedSeal = seal.map { $0.remote != $0.base } ?? false
        guard let remoteSealObject = seal?.remote ?? remoteFiles[GroupContainer.headerSealName] else {
            if localHeaderObject == remoteHeaderObject && !remoteChangedSeal { return nil }
            throw refusal(GroupContainer.headerSealName, "is missing: the header must be sealed with the vault key; nothing was merged")
        }
        if localHeaderObject == remoteHeaderObject && !remoteChangedSeal { return nil }
        let remoteSeal = try blobs[remoteSealObject] ?? git.blobs([remoteSealObject], limit: HeaderSeal.fileLength)[remoteSealObject] ?? []
        guard HeaderSeal.isValid(remoteSeal, for: remoteHeaderBytes, vaultID: vault.vaultID, key: keys.recordKey) else {
            throw refusal(GroupContainer.headerSealName, "is not sealed by this vault's key for the remote's header; nothing was merged")
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

    /// - Parameter isNew: a remote file this device's base lacks: it must be sealed under the
    ///   key the remote's own membership names, never an earlier team key a removed member
    ///   still holds (SPEC.md §16.5).
    func recordVersion(_ object: String, _ blobs: [String: [UInt8]], id: RecordID, path: SyncedPath, fromRemote: Bool, isNew: Bool = false) throws -> RecordVersion {
        let bytes = blobs[object] ?? []
        let record = try open(record: bytes, id: id, path: path.path, fromRemote: fromRemote, isNew: isNew)
        return RecordVersion(object: object, bytes: bytes, record: record, hash: try ciphertextHash(bytes))
    }

    func tombstoneVersion(_ object: String, _ blobs: [String: [UInt8]], id: RecordID, path: SyncedPath, fromRemote: Bool, isNew: Bool = false) throws -> TombstoneVersion {
        let bytes = blobs[object] ?? []
        let tombstone = try authenticated(path.path, fromRemote: fromRemote) {
            try opening(isNew: isNew) { try Tombstone.open(bytes, id: id, vaultID: vault.vaultID, key: $0) }
        }
        return TombstoneVersion(object: object, bytes: bytes, tombstone: tombstone, hash: try ciphertextHash(bytes))
    }

    func open(record bytes: [UInt8], id: RecordID, path: String, fromRemote: Bool, isNew: Bool = false) throws -> Record {
        try authenticated(path, fromRemote: fromRemote) {
            try opening(isNew: isNew) { try RecordSealing.open(bytes, id: id, vaultID: vault.vaultID, key: $0) }
        }
    }

    /// Opens a file under the record key it must be sealed under: a remote file the base lacks
    /// (`isNew`) under the key the remote's membership names only, any other under this vault's
    /// current or an earlier key.
    private func opening<Result>(isNew: Bool, _ body: (SecureBytes) throws -> Result) throws -> Result {
        isNew ? try body(remoteKeys.recordKey) : try keys.openingWithRecordKey(body)
    }

    /// Opens a fetched file; any failure is the remote's file refused (exit 65), naming it.
    func authenticated<Result>(_ path: String, fromRemote: Bool, _ body: () throws -> Result) throws -> Result {
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

    package func refusal(_ path: String, _ reason: String) -> VaultError {
        .corrupt(file: "the remote's " + path, reason: reason)
    }
}
