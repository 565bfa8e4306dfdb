/// A team's key file in a sync (SPEC.md §19.5): judged and taken before the records are merged,
/// because a new team key changes what the records must open under.
extension SyncSession {
    /// Judges the remote's `team.coffer` and takes it when its membership extends the one this
    /// device accepted. Refuses (nothing merged) a remote whose list is forged, forks, or is
    /// older than one this device saw there; a personal vault's remote must hold none.
    func takeRemoteTeamKeys(remote: String) throws {
        let name = GroupContainer.teamKeysName
        let object = try git.objects(in: git.tree(of: remote), under: [name])[name]
        guard vault.isTeam else {
            if object != nil { throw refusal(name, "is a team's key file, and this vault is personal; nothing was merged") }
            return
        }
        guard let object else { throw refusal(name, "is missing: a team's remote must hold its membership list; nothing was merged") }
        let bytes = try git.blobs([object], limit: TeamKeyFile.maximumFileLength)[object] ?? []
        let file = try mappingErrors(file: "the remote's " + name) { try TeamKeyFile.decode(bytes) }
        guard file.teamID == vault.vaultID else { throw refusal(name, "belongs to another vault; nothing was merged") }
        guard var pin = vault.deviceState.teamPin() else {
            throw TeamError.refused("this device pinned no membership for the team (join it with 'coffer team join')")
        }
        let remoteMembership = try remoteChain(file, founder: pin.founder)
        let remoteCount = UInt64(file.entries.count)
        guard remoteCount >= pin.remoteCount else {
            throw TeamError.refused(
                "the remote's list has \(remoteCount) entries and this device saw \(pin.remoteCount) there: it was rolled back")
        }
        let local = try vault.readTeam().membership
        switch Vault.compare(file.entries, with: local.head) {
        case .forked:
            throw TeamError.refused("the remote's list forks from this device's (another list was written over it)")
        case .behind:
            // Entries this device made and has not pushed yet: the remote's list must be where
            // this device's started from, and its files sealed under that list's key.
            guard local.entries[Int(remoteCount) - 1].hash == remoteMembership.head.hash else {
                throw TeamError.refused("the remote's list forks from this device's (another list was written over it)")
            }
            remoteKeys = try keys(named: remoteMembership.keyID)
        case .equal:
            guard file.slots.map(\.signingKey) == remoteMembership.members.map(\.recipient.signingKey) else {
                throw TeamError.refused("the remote's sealed keys are not exactly the members'")
            }
        case .extends:
            var taken: VaultKeys?
            if remoteMembership.keyID != local.keyID {
                taken = try TeamKeys.open(file, membership: remoteMembership, identity: identity())
            } else {
                guard file.slots.map(\.signingKey) == remoteMembership.members.map(\.recipient.signingKey) else {
                    throw TeamError.refused("the remote's sealed keys are not exactly the members'")
                }
                if options.teamIdentity != nil, remoteMembership.member(try identity().signing.publicKey) == nil {
                    throw TeamError.notMember(team: remoteMembership.teamName)
                }
            }
            try vault.writeTeamKeyFile(bytes, membership: remoteMembership, remoteCount: remoteCount)
            report.membershipChanged = true
            if let taken {
                // The records are re-sealed after the merge, which brings most of them already
                // re-sealed by the admin who rotated; the index must open under the new key now.
                try vault.unlock(teamKeys: taken)
                keys = taken
                remoteKeys = taken
                try vault.rebuildIdentityIndex()
                if vault.deviceState.providerSetting() == .enabled {
                    try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.enable(indexKey: taken.indexKey) }
                }
                report.teamKeyChanged = true
            }
            return
        }
        pin.remoteCount = max(pin.remoteCount, remoteCount)
        try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.setTeamPin(pin) }
    }

    /// After a merge that took a new team key: re-seals what only an earlier key opens (this
    /// device's own unpushed changes) and commits it, so nothing under an old key is pushed.
    func resealAfterNewTeamKey() throws {
        guard vault.isTeam, let keyID = try? TeamKeys.keyID(of: keys) else { return }
        try vault.resealStaleRecords()
        try mappingErrors(file: vault.deviceState.directory) { try vault.deviceState.setTeamSealedKeyID(keyID) }
    }

    private func remoteChain(_ file: TeamKeyFile, founder: [UInt8]) throws -> TeamMembership {
        do {
            return try TeamMembership(entries: file.entries, teamID: vault.vaultID, founder: founder)
        } catch {
            guard case .refused(let reason) = error else { throw error }
            throw TeamError.refused("the remote's " + reason)
        }
    }

    /// This person's identity, for a new team key. - Throws: `.locked` when the host gave none.
    private func identity() throws -> PersonalIdentity {
        guard let make = options.teamIdentity else { throw VaultError.locked }
        return try make()
    }

    /// This vault's current or earlier keys whose id is `keyID`.
    private func keys(named keyID: [UInt8]) throws -> VaultKeys {
        for candidate in [keys] + keys.previous where try TeamKeys.keyID(of: candidate) == keyID { return candidate }
        throw TeamError.refused("the remote's list names a team key this device does not have")
    }
}
