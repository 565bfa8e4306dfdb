import CofferStore
import FoundationEssentials

/// A team's layer on sync (SPEC.md §16.5): its key file is judged and taken before the records
/// are merged, because a new team key changes what the records must open under; what only a
/// retired key opens is re-sealed before a push; pushes go as one commit; another device's
/// membership lease is waited for.
final class TeamSyncLayer: SyncLayer {
    init() {}

    func prepare(_ vault: Vault, _ options: SyncOptions) throws {
        try vault.loadTeamHistory(identity: options.teamIdentity)
    }

    /// Waiting for other devices' membership leases ends after this long in all, whatever they
    /// push: a member who keeps pushing leases cannot keep the others from syncing.
    static func longestLeaseWait(_ options: SyncOptions) -> Duration { .seconds(2 * options.leaseSeconds) }

    /// Whether this round must not push: another device holds the team's membership lease,
    /// first seen here less than `leaseSeconds` ago, and this sync has not yet waited
    /// `longestLeaseWait` in all.
    func mustWait(forLease lease: String?, _ session: SyncSession) throws -> Bool {
        let options = session.options
        guard let lease, lease != options.heldLease, session.report.leaseWait < Self.longestLeaseWait(options) else { return false }
        let now = Int(Date().timeIntervalSince1970)
        guard now - session.git.leaseFirstSeen(lease, now: now) < options.leaseSeconds else { return false }
        session.report.leaseWait += .milliseconds(250)
        return true
    }

    func willMerge(remote: String, _ session: SyncSession) throws {
        try session.takeRemoteTeamKeys(remote: remote)
    }

    /// A team whose key changed here or on the remote: what only an earlier key opens (this
    /// device's unpushed changes, or the remote's made before it saw this device's rotation)
    /// is re-sealed before anything is pushed.
    func didMerge(_ session: SyncSession) throws -> Bool {
        guard session.report.teamKeyChanged || session.remoteKeys !== session.keys else { return false }
        try session.resealAfterNewTeamKey()
        return true
    }

    var squashesPushes: Bool { true }

    func didPush(_ session: SyncSession) throws {
        try session.didPushTeamKeys()
    }

    /// Only the membership this device accepted is committed.
    func checkOwnFile(_ path: SyncedPath, file: String, _ session: SyncSession) throws {
        _ = try session.vault.teamMembership()
    }
}

extension Vault {
    /// Commits this device's changes, fetches, merges and (unless `options.push` is off) pushes
    /// (SPEC.md §15.4); a team's with its membership steps (§16.5). Needs the vault unlocked:
    /// everything fetched is authenticated with the vault's keys before it is used.
    /// - Throws: `SyncError` when git cannot run or reach the remote; `VaultError.corrupt` when
    ///   the remote holds anything that is not an authentic part of this vault (nothing is
    ///   merged then); `TeamError` when a team's remote membership is refused.
    public func sync(_ options: SyncOptions = SyncOptions()) throws -> SyncReport {
        try sync(options, layer: isTeam ? TeamSyncLayer() : nil)
    }
}

/// The steps of a team's sync, on the session.
extension SyncSession {
    /// Judges the remote's `team.coffer` and takes it when its membership extends the one this
    /// device accepted. Refuses (nothing merged) a remote whose list is forged, forks, or is
    /// older than one this device saw there; a personal vault's remote must hold none.
    func takeRemoteTeamKeys(remote: String) throws {
        let name = GroupContainer.teamKeysName
        let object = try git.objects(in: git.tree(of: remote), under: [name])[name]
        guard let object else { throw refusal(name, "is missing: a team's remote must hold its membership list; nothing was merged") }
        let bytes = try git.blobs([object], limit: TeamKeyFile.maximumFileLength)[object] ?? []
        let file = try mappingErrors(file: "the remote's " + name) { try TeamKeyFile.decode(bytes) }
        guard file.teamID == vault.vaultID else { throw refusal(name, "belongs to another vault; nothing was merged") }
        guard var pin = vault.deviceState.teamPin() else {
            throw TeamError.refused("this device pinned no membership for the team (join it with 'coffer team join')")
        }
        let (remoteMembership, remoteFileKeys) = try openRemote(file, founder: pin.founder)
        let remoteCount = UInt64(remoteMembership.entries.count)
        guard remoteCount >= pin.remoteCount else {
            throw TeamError.refused(
                "the remote's list has \(remoteCount) entries and this device saw \(pin.remoteCount) there: it was rolled back")
        }
        let local = try vault.readTeam().membership
        switch local.relation(of: remoteMembership.entries) {
        case .forked:
            // Entries this device made and never pushed, against ones another admin pushed
            // meanwhile (both follow the list the remote last confirmed): a race, not an attack.
            // The remote's list wins; this device's entries are reported, to be made again.
            let confirmed = Int(pin.remoteCount)
            guard confirmed >= 1, confirmed < local.entries.count, remoteMembership.entries.count >= confirmed,
                  remoteMembership.entries[confirmed - 1].hash == local.entries[confirmed - 1].hash
            else { throw TeamError.refused("the remote's list forks from this device's (another list was written over it)") }
            report.droppedMembershipChanges = local.entries[confirmed...].map(\.summary)
            // A key this device made for a removal that lost still opens what it sealed, until
            // the re-sealing after the merge.
            let named = Set([remoteMembership.keyID] + remoteMembership.earlierKeyIDs)
            let orphaned = try ([keys] + keys.previous).filter { try !named.contains(TeamKeys.keyID(of: $0)) }
            try take(bytes, remoteMembership, try VaultKeys(vaultKey: remoteFileKeys.vaultKey, previous: remoteFileKeys.previous + orphaned),
                     keyChanged: true)
            return
        case .behind:
            // Entries this device made and has not pushed yet: the remote's list is where this
            // device's started from, and what the remote added is sealed under that list's key.
            remoteKeys = remoteFileKeys
        case .equal:
            break
        case .extends:
            try take(bytes, remoteMembership, remoteFileKeys, keyChanged: remoteMembership.keyID != local.keyID)
            return
        }
        pin.remoteCount = max(pin.remoteCount, remoteCount)
        try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.setTeamPin(pin) }
    }

    /// Takes the remote's judged list: its file, its pin, and — when it names another key —
    /// that key, under which the index is rebuilt now; the records are re-sealed after the
    /// merge, which brings most of them already re-sealed by the admin who rotated.
    ///
    /// The file and the index under its key are written in one hold of the exclusive lock: a
    /// reader meets the old key's file and index or the new key's, never a mix (SPEC.md §16.5).
    private func take(_ bytes: [UInt8], _ membership: TeamMembership, _ taken: VaultKeys, keyChanged: Bool) throws {
        try vault.exclusiveTransaction { opened in
            try vault.writeTeamKeyFile(bytes, membership: membership, remoteCount: UInt64(membership.entries.count))
            guard keyChanged else { return }
            vault.unlock(keys: taken)
            try vault.rebuildIdentityIndex(in: opened)
            if vault.deviceState.providerSetting() == .enabled {
                try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.enable(indexKey: taken.indexKey) }
            }
        }
        report.membershipChanged = true
        guard keyChanged else { return }
        keys = taken
        remoteKeys = taken
        report.teamKeyChanged = true
    }

    /// The remote's list, opened with a key this device has (the current one, or an earlier one
    /// when the remote has not seen this device's rotation), else with this person's slot (the
    /// remote rotated the key), and judged.
    private func openRemote(_ file: TeamKeyFile, founder: [UInt8]) throws -> (TeamMembership, VaultKeys) {
        do {
            for candidate in [keys] + keys.previous {
                if let block = try TeamKeys.block(of: file, key: candidate) { return try TeamKeys.judge(file, block, key: candidate, founder: founder) }
            }
            guard let make = options.teamIdentity else { throw VaultError.locked }
            let identity = try make()
            do {
                return try TeamKeys.open(file, identity: identity, founder: founder)
            } catch TeamError.notMember {
                throw removal(told: TeamKeys.removalNotice(in: file, for: identity))
            }
        } catch TeamError.refused(let reason) {
            throw TeamError.refused("the remote's " + reason)
        }
    }

    /// No slot for this person in the remote's list. With an admin's signed notice of the
    /// removal, the removal is told (who, when) and noted in this device's state, so the team is
    /// left out here from now on (SPEC.md §16.6); without one, only the missing slot is known.
    private func removal(told entry: MembershipEntry?) -> TeamError {
        let team = TeamDirectory.name(of: vault.container) ?? vault.container.path
        guard let entry else { return .notMember(team: team) }
        let known = try? vault.readTeam().membership
        let name = known?.entries.last { $0.subject.signingKey == entry.signer }?.name
        try? vault.deviceState.setTeamRemoval(time: entry.time, by: name ?? "")
        return .removed(team: team, by: name, on: entry.time)
    }

    /// The remote holds this device's list now: a later one older than it is a rollback.
    func didPushTeamKeys() throws {
        guard var pin = vault.deviceState.teamPin(), pin.remoteCount < pin.accepted.count else { return }
        pin.remoteCount = pin.accepted.count
        try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.setTeamPin(pin) }
    }

    /// After a merge in a team whose key changed (here or on the remote): re-seals what only
    /// an earlier key opens, so nothing under an old key is pushed.
    func resealAfterNewTeamKey() throws {
        guard let keyID = try? TeamKeys.keyID(of: keys) else { return }
        try vault.resealStaleFiles()
        try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.setTeamSealedKeyID(keyID) }
    }
}
