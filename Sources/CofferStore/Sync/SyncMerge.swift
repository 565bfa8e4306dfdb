import CofferFormat
import FoundationEssentials

/// One side's copy of a record file in a merge: the git object (for a cheap comparison), its
/// bytes, and the record they open to (authenticated before it gets here).
struct RecordVersion {
    let object: String
    let bytes: [UInt8]
    let record: Record
    let hash: [UInt8]
}

/// One side's tombstone file, opened.
struct TombstoneVersion {
    let object: String
    let bytes: [UInt8]
    let tombstone: Tombstone
    let hash: [UInt8]
}

/// Everything a merge knows of one record id: its state at the last sync (`base`), on this
/// device and on the remote.
struct MergeInput {
    let id: RecordID
    var base: RecordVersion?
    var baseTombstone: String?
    var local: RecordVersion?
    var remote: RecordVersion?
    var localTombstone: TombstoneVersion?
    var remoteTombstone: TombstoneVersion?

    init(id: RecordID) { self.id = id }
}

/// What the merged state holds for one record id, and what the merge noticed on the way.
struct MergeDecision: Equatable {
    enum RecordOutcome: Equatable {
        /// This device's file stays.
        case local
        /// This device's document, only its revision raised to this (an edit that met a re-seal
        /// on the remote, raised above it so that every device holding the re-seal takes it).
        case localRaised(UInt64)
        /// The remote's file replaces or adds it, byte for byte.
        case remote
        /// Both sides edited it: a new revision joins them (`SyncMerge.resolve`).
        case merged
        /// The record is deleted (or stays deleted).
        case absent
    }

    enum TombstoneOutcome: Equatable {
        case none, local, remote
        /// A new tombstone of this revision: the deletion raised above a re-seal it beat
        /// (`SyncMerge.decide`), so that every device holding the re-seal drops it too.
        case raised(UInt64)
    }

    var record: RecordOutcome
    var tombstone: TombstoneOutcome
    /// The remote offered a state older than this device holds or has seen (a rolled-back or
    /// dropped record, a dropped tombstone): kept out, and the newer state goes back up.
    var remoteStale = false
    /// The remote holds a record whose deletion this device remembers, at or below the deleted
    /// revision: refused.
    var putBack = false
}

/// The merge rules of SPEC.md §15.3, as pure functions: no file, no git, no clock but the one
/// passed in. Any implementation that follows them merges two devices to the same records.
enum SyncMerge {
    /// Decides one record id.
    ///
    /// A remote record is *news* when it differs from the base and has a higher revision than
    /// the base had; anything else the remote holds is older than what this device has seen and
    /// never replaces it. A local record is *changed* when it differs from the base. A version
    /// survives a deletion only with a revision above the tombstone's (an edit beats a delete;
    /// an old copy never brings a deleted record back).
    static func decide(_ input: MergeInput) -> MergeDecision {
        let baseRevision = input.base?.record.revision ?? 0
        let remoteIsNews = input.remote.map { $0.object != input.base?.object && $0.record.revision > baseRevision } ?? false
        let localChanged = input.local?.object != input.base?.object
        let tombstone = newest(input.localTombstone, input.remoteTombstone)
        let deletedRevision = tombstone?.version.tombstone.revision ?? 0

        var remoteStale = false
        if let remote = input.remote, remote.object != input.base?.object, !remoteIsNews { remoteStale = true }
        if input.remote == nil, input.base != nil, input.remoteTombstone == nil { remoteStale = true }
        if input.baseTombstone != nil, input.remoteTombstone == nil { remoteStale = true }

        // A re-seal (the base's document sealed anew, a team's key rotation, SPEC.md §16.4) is no
        // edit: against a deletion it counts at the base's revision, so the rotation's bump of
        // every revision never brings back a record deleted elsewhere before it was synced.
        func isReseal(_ version: RecordVersion) -> Bool {
            guard let base = input.base, version.object != base.object else { return false }
            return sameDocument(version.record, base.record)
        }
        func effectiveRevision(_ version: RecordVersion) -> UInt64 { isReseal(version) ? baseRevision : version.record.revision }

        var candidates: [(side: MergeDecision.RecordOutcome, version: RecordVersion)] = []
        if let local = input.local, localChanged || !remoteIsNews { candidates.append((.local, local)) }
        if let remote = input.remote, remoteIsNews, remote.object != input.local?.object { candidates.append((.remote, remote)) }
        let offered = candidates
        // One side re-sealed what the other edited: the edit is the result, never joined with the
        // re-seal — a join is a new revision with a new `modified`, an edit nobody made, which beat
        // a deletion its owner made before seeing it. This device's edit goes out raised above the
        // remote's re-seal, so that every device that took the re-seal takes it as news. Two
        // re-seals: the remote's.
        var raiseLocal: UInt64?
        if candidates.count == 2, let local = input.local, let remote = input.remote {
            switch (isReseal(local), isReseal(remote)) {
            case (true, _): candidates = [candidates[1]]
            case (false, true):
                candidates = [candidates[0]]
                if local.record.revision <= remote.record.revision { raiseLocal = remote.record.revision + 1 }
            case (false, false): break
            }
        }
        let survivors = candidates.filter { effectiveRevision($0.version) > deletedRevision }
        let putBack = remoteIsNews && !(input.remote.map(isReseal) ?? false) && !survivors.contains { $0.side == .remote }
            && input.remote?.object != input.local?.object

        let record: MergeDecision.RecordOutcome = switch survivors.count {
        case 0: .absent
        case 1: survivors[0].side == .local ? raiseLocal.map { .localRaised($0) } ?? .local : survivors[0].side
        default: .merged
        }
        var keptTombstone: MergeDecision.TombstoneOutcome = record != .absent ? .none : tombstone?.side ?? .none
        if record == .absent, tombstone != nil,
           let raised = offered.map(\.version.record.revision).filter({ $0 > deletedRevision }).max() {
            // The deletion beat a re-seal above its revision: raised above it for everyone.
            keptTombstone = .raised(raised)
        }
        return MergeDecision(record: record, tombstone: keptTombstone, remoteStale: remoteStale, putBack: putBack)
    }

    /// Whether two versions are one document, whatever their revisions.
    static func sameDocument(_ a: Record, _ b: Record) -> Bool {
        var x = a
        x.revision = b.revision
        return x == b
    }

    /// The tombstone that counts: the higher deleted revision, then the larger file hash.
    static func newest(
        _ local: TombstoneVersion?, _ remote: TombstoneVersion?
    ) -> (side: MergeDecision.TombstoneOutcome, version: TombstoneVersion)? {
        switch (local, remote) {
        case (nil, nil): return nil
        case (let local?, nil): return (.local, local)
        case (nil, let remote?): return (.remote, remote)
        case (let local?, let remote?):
            let localKey = (local.tombstone.revision, local.hash), remoteKey = (remote.tombstone.revision, remote.hash)
            if localKey.0 != remoteKey.0 { return localKey.0 > remoteKey.0 ? (.local, local) : (.remote, remote) }
            return localKey.1.lexicographicallyPrecedes(remoteKey.1) ? (.remote, remote) : (.local, local)
        }
    }

    /// Whether `a` wins over `b` when both edited one record: the higher revision, then the later
    /// `modified`, then the larger hash of the record file (so two devices pick the same one).
    static func wins(_ a: RecordVersion, over b: RecordVersion) -> Bool {
        if a.record.revision != b.record.revision { return a.record.revision > b.record.revision }
        if a.record.modified != b.record.modified { return a.record.modified > b.record.modified }
        return b.hash.lexicographicallyPrecedes(a.hash)
    }

    /// Joins two edits of one record: the winner's content at a revision above both, with the
    /// loser's password (and its history) in the password history. When the loser differs in
    /// anything else a person wrote, it is also returned, to be kept as a conflict copy.
    static func resolve(_ first: RecordVersion, _ second: RecordVersion, now: Date) -> (merged: Record, conflictCopy: Record?) {
        let (winner, loser) = wins(first, over: second) ? (first.record, second.record) : (second.record, first.record)
        var merged = winner
        merged.revision = max(winner.revision, loser.revision) + 1
        merged.modified = max(now, winner.modified)
        merged.passwordHistory = joinedHistory(winner, loser)
        merged.attachments = joinedAttachments(winner, loser)
        merged.passkey = joinedPasskey(winner, loser)
        merged.passwordReportedUnused = [winner.passwordReportedUnused, loser.passwordReportedUnused].compactMap { $0 }.min()
        guard !sameContent(winner, loser) else { return (merged, nil) }
        var copy = loser
        if copy.passkey?.credentialID == merged.passkey?.credentialID { copy.passkey = nil }  // one credential, one item
        return (merged, copy)
    }

    /// One passkey edited on both sides — by relying parties' signals (§8.2.2) or signatures of a
    /// counted passkey — is one credential: the winner's member, its counter the higher of the
    /// two, both sides' former names joined (newest first, each once, at most 20). Passkeys of
    /// two credentials: the winner's.
    static func joinedPasskey(_ winner: Record, _ loser: Record) -> Passkey? {
        guard var passkey = winner.passkey, let other = loser.passkey, other.credentialID == passkey.credentialID else { return winner.passkey }
        passkey.signCount = max(passkey.signCount, other.signCount)
        var names: [PasskeyFormerName] = []
        for name in (passkey.formerNames + other.formerNames).sorted(by: { $0.replaced > $1.replaced }) where !names.contains(name) {
            names.append(name)
        }
        passkey.formerNames = Array(names.prefix(PasskeyFormerName.maximumCount))
        return passkey
    }

    /// Both sides' attachments (SPEC.md §15.3): the winner's, then each of the loser's it lacks
    /// (by id), renamed `name (2)` where the winner has another of that name. An attachment
    /// removed on one side while the other edited the item is kept: nothing is lost.
    static func joinedAttachments(_ winner: Record, _ loser: Record) -> [Attachment] {
        var joined = winner.attachments
        for var attachment in loser.attachments where !joined.contains(where: { $0.id == attachment.id }) {
            var base = attachment.name
            while base.utf8.count > Attachment.maximumNameBytes - 8 { base.removeLast() }
            var number = 2
            while joined.contains(where: { $0.name == attachment.name }) {
                attachment.name = base + " (\(number))"
                number += 1
            }
            joined.append(attachment)
        }
        return Array(joined.prefix(Attachment.maximumPerItem))
    }

    /// Both histories and the loser's current password, newest first, each password once, and
    /// never the merged record's own current password (the winner's): it is not history.
    static func joinedHistory(_ winner: Record, _ loser: Record) -> [PasswordHistoryEntry] {
        var entries = winner.passwordHistory + loser.passwordHistory
        if loser.password != winner.password, !loser.password.isEmpty {
            entries.append(PasswordHistoryEntry(password: loser.password, replaced: loser.modified))
        }
        var seen: [String] = [winner.password]
        var result: [PasswordHistoryEntry] = []
        for entry in entries.enumerated().sorted(by: { ($0.element.replaced, -$0.offset) > ($1.element.replaced, -$1.offset) }).map(\.element)
        where !seen.contains(entry.password) {
            seen.append(entry.password)
            result.append(entry)
        }
        return Array(result.prefix(Record.maximumPasswordHistory))
    }

    /// Whether two versions differ only in what a merge joins (password and its history,
    /// attachments, one passkey's state, a report of an unused password) or bookkeeping
    /// (revision, dates).
    static func sameContent(_ a: Record, _ b: Record) -> Bool {
        var (x, y) = (a, b)
        x.password = ""; y.password = ""
        x.passwordHistory = []; y.passwordHistory = []
        x.attachments = []; y.attachments = []  // joined into the merged item
        x.passwordReportedUnused = nil; y.passwordReportedUnused = nil  // joined too
        if x.passkey?.credentialID == y.passkey?.credentialID { x.passkey = y.passkey }  // one credential: joined
        x.revision = 0; y.revision = 0
        x.modified = y.modified
        x.created = y.created
        return x == y
    }

    /// The loser of a conflict kept as an item of its own, named so that a person sees it:
    /// "GitLab (conflict 2026-12-03)", tagged `conflict`.
    static func conflictCopy(of loser: Record, id: RecordID, now: Date) -> Record {
        var copy = loser
        copy.id = id
        copy.attachments = []  // every one of them is on the merged item: a file belongs to one item
        copy.revision = 1
        copy.modified = now
        copy.name = "\(loser.title.isEmpty ? "item" : loser.title) (conflict \(UTCTimestamp.format(now).prefix(10)))"
        if !copy.tags.contains("conflict") { copy.tags.append("conflict") }
        return copy
    }
}
