import CofferFormat
import FoundationEssentials

/// Writing a decided merge into the container and committing it (SPEC.md §15.4, step 3).
extension SyncSession {
    /// Writes the merged state under the vault's lock and commits it: remote tombstones first
    /// (a crash then leaves a record beside a tombstone, which the next merge settles), the
    /// records in one journaled transaction (the index follows), then tombstones an edit
    /// outlived, the header, and the merge commit.
    func apply(
        _ decisions: [RecordID: MergeDecision], inputs: [RecordID: MergeInput], header: HeaderPlan?,
        head: String?, remote: String, remoteTree: String, remoteAttachments: [AttachmentID: String]
    ) throws -> String? {
        try vault.exclusiveTransaction { opened -> String? in
            guard try localStateIsUnchanged(inputs, in: opened) else { return nil }
            if let header, try fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length) != header.replacing {
                return nil
            }
            let now = RecordCoding.wholeSeconds(Date())
            var staged: [SyncedPath] = []
            var changes: [RecordChange] = []
            // Attachment files follow the records that name them (SPEC.md §6.7, §15.3).
            var arriving: [(RecordID, AttachmentID)] = []
            var leaving: [(RecordID, AttachmentID)] = []
            func follow(_ id: RecordID, from before: [Attachment], to after: [Attachment]) throws {
                for attachment in after where !before.contains(where: { $0.id == attachment.id }) {
                    try receiveAttachment(attachment, of: id, remoteTree: remoteTree, remoteAttachments: remoteAttachments, in: opened)
                    arriving.append((id, attachment.id))
                    staged.append(.attachment(attachment.id))
                }
                for attachment in before where !after.contains(where: { $0.id == attachment.id }) {
                    try vault.moveAside(attachment.id, of: id, in: opened)
                    leaving.append((id, attachment.id))
                    staged.append(.attachment(attachment.id))
                }
            }
            let index = try vault.identityIndex(opened)
            let manifest = try index.readManifest()
            // What this device wrote since its own commit (none of it in the merged tree),
            // before the merge writes: the next sync's baseline keeps it pending.
            let written = try head.flatMap { head in
                try validBaseline(for: git.tree(of: head)).flatMap { try pathsChanged(since: $0, manifest: manifest, index: index, in: opened) }
            }
            for id in decisions.keys.sorted() {
                let decision = decisions[id]!, input = inputs[id]!
                if decision.remoteStale { report.remoteBehind += 1 }
                if decision.putBack { report.refusedPutBack += 1 }
                if decision.tombstone == .remote, let tombstone = input.remoteTombstone, tombstone.object != input.localTombstone?.object {
                    try fileSystem.writeAtomically(tombstone.bytes, to: id.hex, in: tombstoneShard(of: id, in: opened, create: true), via: opened.temporary)
                    staged.append(.tombstone(id))
                }
                if case .raised(let revision) = decision.tombstone {
                    let deleted = [input.localTombstone, input.remoteTombstone].compactMap { $0?.tombstone.deleted }.max() ?? now
                    let raised = try Tombstone(recordID: id, revision: revision, deleted: deleted).sealed(vaultID: vault.vaultID, key: keys.recordKey)
                    try fileSystem.writeAtomically(raised, to: id.hex, in: tombstoneShard(of: id, in: opened, create: true), via: opened.temporary)
                    staged.append(.tombstone(id))
                }
                // Ranks a person gave this device's version carry over (a record new here has none).
                let previous = input.local == nil ? [] : try vault.entries(of: id, index: index, manifest: manifest)
                switch decision.record {
                case .local:
                    break
                case .localRaised(let revision):
                    guard var raised = input.local?.record else { continue }
                    raised.revision = revision
                    changes.append(RecordChange(
                        id: id, sealed: try RecordSealing.seal(raised, vaultID: vault.vaultID, key: keys.recordKey),
                        revision: revision, entries: Vault.indexEntries(of: raised, previous: previous)))
                    staged.append(.record(id))
                case .remote:
                    guard let version = input.remote else { continue }
                    try follow(id, from: input.local?.record.attachments ?? [], to: version.record.attachments)
                    changes.append(RecordChange(
                        id: id, sealed: version.bytes, revision: version.record.revision,
                        entries: Vault.indexEntries(of: version.record, previous: previous), isAdd: input.local == nil))
                    if input.local == nil { report.incoming.added += 1 } else { report.incoming.updated += 1 }
                    staged.append(.record(id))
                case .merged:
                    guard let local = input.local, let remote = input.remote else { continue }
                    let (merged, loser) = SyncMerge.resolve(local, remote, now: now)
                    try follow(id, from: local.record.attachments, to: merged.attachments)
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
                    guard let local = input.local else { continue }
                    try follow(id, from: local.record.attachments, to: [])
                    changes.append(RecordChange(id: id, sealed: nil, revision: 0, entries: []))
                    report.incoming.deleted += 1
                    staged.append(.record(id))
                }
            }
            if !changes.isEmpty { try vault.commit(changes, in: opened) }
            for (id, attachment) in arriving { try vault.moveIncoming(Vault.incomingName(id, attachment), into: attachment, in: opened) }
            for (id, attachment) in leaving {
                try fileSystem.removeFile(Vault.incomingName(id, attachment), in: opened.directory(GroupContainer.incomingName))
            }
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
            // The remote's team key file, taken before the merge (SPEC.md §16.5).
            if report.membershipChanged { staged.append(.teamKeys) }
            try git.stage(staged.map(\.path))
            let tree = try git.writeTree()
            let commit = tree == remoteTree
                ? remote
                : try git.commitTree(tree, parents: (head.map { [$0] } ?? []) + [remote], message: Self.message(staged.count, merge: true))
            try git.updateRef(Git.branch, to: commit, from: head)
            if let written {
                saveBaseline(tree: tree, manifest: try index.readManifest(), index: index, in: opened, pending: written)
            } else {
                try? vault.deviceState.remove(baselineName)
            }
            return commit
        }
    }

    /// An attachment a merged record names that this device lacks: the remote's file, whole and
    /// authentic under the record's key, written in passage (`incoming/`) until the record is
    /// committed. A remote whose item names a file it does not hold is refused.
    private func receiveAttachment(
        _ attachment: Attachment, of id: RecordID, remoteTree: String, remoteAttachments: [AttachmentID: String], in opened: OpenContainer
    ) throws {
        let path = SyncedPath.attachment(attachment.id).path
        guard let object = try remoteAttachments[attachment.id] ?? git.objects(in: remoteTree, under: [path])[path] else {
            throw refusal(path, "is named by an item of the remote but missing from it; nothing was merged")
        }
        // Streamed from git through the check into a temp file: constant memory at any size.
        let file = try fileSystem.createStreamedFile(in: opened.temporary)
        let checker = AttachmentChecker(attachment)
        do {
            try git.streamBlob(object, limit: AttachmentStream.fileLength(attachment.size)) { piece in
                try piece.withUnsafeBytes { bytes in
                    try checker.append(bytes)
                    try file.write(bytes)
                }
            }
            try checker.finish()
        } catch let failure as AttachmentOpener.Failure {
            throw refusal(path, "\(failure); nothing was merged")
        }
        try file.finish()
        let incoming = try opened.directory(GroupContainer.incomingName, create: true)
        try fileSystem.rename(file.name, in: opened.temporary, to: Vault.incomingName(id, attachment.id), in: incoming)
        try fileSystem.sync(incoming)
    }

    /// Whether every record and tombstone the merge decided on is still what the plan read
    /// (a `coffer add` or `edit` may have run since the local commit).
    func localStateIsUnchanged(_ inputs: [RecordID: MergeInput], in opened: OpenContainer) throws -> Bool {
        for (id, input) in inputs {
            let record = try? vault.readRecordFile(id, in: opened)
            let tombstone = try? fileSystem.readFile(id.hex, in: tombstoneShard(of: id, in: opened, create: false), limit: Tombstone.fileLength)
            guard record == input.local?.bytes, tombstone == input.localTombstone?.bytes else {
                return false
            }
        }
        return true
    }
}
