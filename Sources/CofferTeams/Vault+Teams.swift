import CofferStore
import FoundationEssentials

/// A team vault (SPEC.md §16): an ordinary container whose vault key reaches its members
/// through `team.coffer` — sealed to each member's key, under a membership chain an admin signs —
/// instead of a master password.
extension Vault {
    // MARK: Which containers are teams

    /// The group identifier of team `name`: `team.<name>` (SPEC.md §16.6).
    public static func teamGroupIdentifier(_ name: String) throws(TeamError) -> String {
        try TeamNames.validate(name)
        return "team." + name
    }

    // MARK: Reading the membership

    /// The team's membership as this container holds it, checked against what this device
    /// pinned (§16.5): the founder it joined, and no older or forked chain than the one it
    /// accepted. Needs the team unlocked: the list is sealed under the team key.
    public func teamMembership() throws -> TeamMembership {
        try readTeam().membership
    }

    /// `team.coffer` opened with the team's current key (or `identity`'s slot when given).
    package func readTeam(identity: PersonalIdentity? = nil) throws -> (membership: TeamMembership, keys: VaultKeys) {
        let path = container.path + "/" + GroupContainer.teamKeysName
        let bytes = try mappingErrors(file: path) {
            try fileSystem.readFile(GroupContainer.teamKeysName, in: openContainer().root, limit: TeamKeyFile.maximumFileLength)
        }
        let file = try mappingErrors(file: path) { try TeamKeyFile.decode(bytes) }
        guard file.teamID == vaultID else { throw TeamError.refused("team.coffer belongs to another vault") }
        let pin = deviceState.teamPin()
        let (membership, keys) = try identity.map { try TeamKeys.open(file, identity: $0, founder: pin?.founder) }
            ?? TeamKeys.open(file, key: self.keys(), founder: pin?.founder)
        if let pin {
            switch pin.accepted.relation(of: membership.entries) {
            case .extends, .equal: break
            case .behind: throw TeamError.refused("team.coffer holds an older membership list than this device accepted (rolled back)")
            case .forked: throw TeamError.refused("team.coffer holds a membership list that forks from the one this device accepted")
            }
        }
        return (membership, keys)
    }

    // MARK: Leaving

    /// Removes this team's copy from this device (`coffer team leave`): its container, beneath
    /// the group containers' directory and never through a link, and its device state.
    public func removeFromDevice() throws {
        guard isTeam else { throw TeamError.invalid("\(container.path) is not a team") }
        lock()
        let path = FileSystem.absolutePath(container.path)
        guard let slash = path.lastIndex(of: "/") else { return }
        try mappingErrors(file: path) {
            let parent = try fileSystem.openDirectory(atPath: slash == path.startIndex ? "/" : String(path[..<slash]), check: .anyOwner)
            fileSystem.removeTree(String(path[path.index(after: slash)...]), in: parent)
        }
        deviceState.removeAll()
    }

    // MARK: Unlocking

    /// Unlocks the team with this person's identity: opens their sealed copy of the key, the
    /// membership and the earlier keys, all judged (§16.4). A device whose records or index are
    /// still sealed under an earlier key (a removal cut short) finishes re-sealing them here.
    /// - Throws: `TeamError.notMember` when the identity has no copy (removed).
    public func unlockTeam(identity: PersonalIdentity) throws {
        let (membership, keys) = try readTeamNamingIt(identity: identity)
        unlock(keys: keys)
        rememberUnlockingIdentity(identity)
        // A rotation by another process later: its reads take the new keys through the identity.
        setTeamKeySource { [weak self] in
            guard let self else { throw VaultError.locked }
            return try self.readTeam(identity: identity).keys
        }
        if deviceState.teamSealedKeyID() != membership.keyID { try resealUnderCurrentKey(keyID: membership.keyID) }
        try didUnlockWithIdentity(keys: keys)
    }

    /// `readTeam`, with the team's name in a `notMember` error (the list that names it is sealed).
    private func readTeamNamingIt(identity: PersonalIdentity) throws -> (membership: TeamMembership, keys: VaultKeys) {
        do {
            return try readTeam(identity: identity)
        } catch TeamError.notMember {
            throw TeamError.notMember(team: TeamDirectory.name(of: container) ?? container.path)
        }
    }

    /// The person proved their own master password (their identity opened the team): as after
    /// a password unlock, a device that never configured the identity store enables it (§8.2).
    func didUnlockWithIdentity(keys: VaultKeys) throws {
        if deviceState.providerSetting() == .notConfigured {
            try mappingErrors(file: deviceState.directory) { try deviceState.enable(indexKey: keys.indexKey) }
        }
    }

    /// A team unlocked from a keyring session holds only its current key: this adds the earlier
    /// ones from `team.coffer` (what a sync's base may be sealed under). When the session's key
    /// no longer opens it (another process took a rotation), `identity` opens the new one.
    func loadTeamHistory(identity: (() throws -> PersonalIdentity)?) throws {
        guard try keys().previous.isEmpty else { return }
        do {
            unlock(keys: try readTeam().keys)
        } catch TeamError.refused {
            guard let identity else { throw VaultError.locked }
            unlock(keys: try readTeamNamingIt(identity: identity()).keys)
        }
    }

    // MARK: Founding

    /// Founds a team in `container`: a fresh vault whose header wraps its key under random bytes
    /// nobody keeps (§16.3), and a membership chain of one entry — the founder, an admin.
    /// - Returns: the team vault, unlocked.
    public static func createTeam(
        named name: String, founder identity: PersonalIdentity, founderName: String, owner: GroupContainer,
        in container: GroupContainer, configuration: VaultConfiguration = .standard()
    ) throws -> Vault {
        try TeamNames.validate(name)
        try TeamNames.validate(memberName: founderName)
        let placeholder = try SecureBytes.random(count: 32)
        let policy = configuration.kdfPolicy
        let kdf = KDFParameters(opsLimit: policy.opsLimit.lowerBound, memLimit: policy.memLimit.lowerBound)
        let vault = try Vault.create(in: container, masterPassword: placeholder, kdf: kdf, configuration: configuration)
        let keys = try vault.keys()
        var founding = MembershipEntry(
            action: .found, isAdmin: true, sequence: 0, time: UInt64(Date().timeIntervalSince1970),
            previousHash: [UInt8](repeating: 0, count: 32), subject: identity.recipient, keyID: try TeamKeys.keyID(of: keys),
            signer: identity.signing.publicKey, name: founderName, teamName: name, signature: [])
        try founding.sign(with: identity.signing, teamID: vault.vaultID)
        let membership = try TeamMembership(entries: [founding], teamID: vault.vaultID)
        try mappingErrors(file: vault.deviceState.directory) {
            try vault.deviceState.setTeamOwner(FileSystem.absolutePath(owner.path))
            try vault.deviceState.setTeamSealedKeyID(membership.keyID)
        }
        try vault.writeTeamKeyFile(TeamKeys.seal(keys, membership: membership).encoded, membership: membership, remoteCount: 0)
        return vault
    }

    // MARK: Changing the membership

    /// Adds `recipient` as a member (an admin when `admin`). Only an admin may; the vault key
    /// does not change, so no record is re-sealed: the new member gets a sealed copy of it.
    @discardableResult
    public func addTeamMember(_ recipient: TeamRecipient, name: String, admin: Bool, by identity: PersonalIdentity) throws -> TeamMembership {
        try TeamNames.validate(memberName: name)
        return try changeMembership(by: identity) { membership, keys in
            guard membership.member(recipient.signingKey) == nil else { throw TeamError.invalid("\(recipient.fingerprint) is already a member") }
            guard !membership.members.contains(where: { $0.name == name }) else { throw TeamError.invalid("a member is already named '\(name)'") }
            return (MembershipEntry(
                action: .add, isAdmin: admin, sequence: 0, time: 0, previousHash: [], subject: recipient,
                keyID: membership.keyID, signer: [], name: name, teamName: "", signature: []), keys)
        }
    }

    /// Makes a member an admin, or no longer one. The key does not change.
    @discardableResult
    public func setTeamRole(of member: TeamMembership.Member, admin: Bool, by identity: PersonalIdentity) throws -> TeamMembership {
        try changeMembership(by: identity) { membership, keys in
            (MembershipEntry(
                action: .role, isAdmin: admin, sequence: 0, time: 0, previousHash: [], subject: member.recipient,
                keyID: membership.keyID, signer: [], name: member.name, teamName: "", signature: []), keys)
        }
    }

    /// Removes a member and rotates the key (§16.4): a new vault key, sealed only to the
    /// remaining members, with the old one kept among the earlier keys; then every record,
    /// tombstone and the index are re-sealed under it. All of it under one hold of the vault's
    /// exclusive lock, so a reader meets the team before the rotation or after it, never
    /// between (a fill that did met an index under a key it did not have, and called it
    /// tampering). The removed person's copy still opens what they had.
    /// - Returns: the membership, and the items the removed person could read (to change).
    public func removeTeamMember(_ member: TeamMembership.Member, by identity: PersonalIdentity) throws -> (TeamMembership, [Record]) {
        let readable = try allRecords()
        let membership = try changeMembership(by: identity) { membership, old in
            let new = try VaultKeys(vaultKey: SecureBytes.random(count: VaultKeys.length), previous: [old] + old.previous)
            return (MembershipEntry(
                action: .remove, isAdmin: false, sequence: 0, time: 0, previousHash: [], subject: member.recipient,
                keyID: try TeamKeys.keyID(of: new), signer: [], name: member.name, teamName: "", signature: []), new)
        } thenInLock: { opened, rotated, membership in
            self.unlock(keys: rotated)
            try self.resealUnderCurrentKey(keyID: membership.keyID, in: opened)
        }
        return (membership, readable)
    }

    /// Appends the entry `make` returns (signed here, by `identity`, who must be an admin) and
    /// writes `team.coffer` with the keys it returns sealed to the members after it. `make` gets
    /// the team's keys as the file holds them, earlier ones included (a team unlocked from a
    /// session holds only the current one, and its earlier keys must not be lost). `thenInLock`
    /// runs under the same hold of the exclusive lock, after the file is written.
    private func changeMembership(
        by identity: PersonalIdentity, _ make: (TeamMembership, VaultKeys) throws -> (MembershipEntry, VaultKeys),
        thenInLock: ((OpenContainer, VaultKeys, TeamMembership) throws -> Void)? = nil
    ) throws -> TeamMembership {
        // Passes `TeamError` through as it is (a write transaction would call it corruption).
        try exclusiveTransaction { opened in
            let (membership, current) = try readTeam()
            guard let me = membership.member(identity.signing.publicKey), me.isAdmin else { throw TeamError.notAdmin(team: membership.teamName) }
            var (entry, keys) = try make(membership, current)
            entry.sequence = UInt64(membership.entries.count)
            entry.time = UInt64(Date().timeIntervalSince1970)
            entry.previousHash = membership.entries.last!.hash
            try entry.sign(with: identity.signing, teamID: vaultID)
            let next = try TeamMembership(entries: membership.entries + [entry], teamID: vaultID, founder: membership.founder)
            // The notices of earlier removals go on; a removal adds one for the removed member.
            var notices = try currentTeamKeyFile(in: opened).notices
            if entry.action == .remove { notices = try TeamKeys.notices(notices, adding: entry, teamID: vaultID) }
            try writeTeamKeyFile(
                TeamKeys.seal(keys, membership: next, notices: notices).encoded, membership: next, remoteCount: deviceState.teamPin()?.remoteCount ?? 0)
            try thenInLock?(opened, keys, next)
            return next
        }
    }

    /// `team.coffer` as this container holds it, parsed (not judged).
    func currentTeamKeyFile(in opened: OpenContainer) throws -> TeamKeyFile {
        let path = container.path + "/" + GroupContainer.teamKeysName
        let bytes = try mappingErrors(file: path) { try fileSystem.readFile(GroupContainer.teamKeysName, in: opened.root, limit: TeamKeyFile.maximumFileLength) }
        return try mappingErrors(file: path) { try TeamKeyFile.decode(bytes) }
    }

    /// Writes the bytes of a verified `team.coffer` and pins its chain on this device.
    func writeTeamKeyFile(_ bytes: [UInt8], membership: TeamMembership, remoteCount: UInt64) throws {
        try mappingErrors(file: container.path + "/" + GroupContainer.teamKeysName) {
            let opened = try openContainer()
            try fileSystem.writeAtomically(bytes, to: GroupContainer.teamKeysName, in: opened.root, via: opened.temporary)
            try deviceState.setTeamPin(TeamPin(founder: membership.founder, accepted: membership.head, remoteCount: remoteCount))
        }
    }

    // MARK: Re-sealing under a new key

    /// Rebuilds the index under the current key and re-seals every record and tombstone that
    /// only an earlier key opens (a record with revision + 1, so that every device takes it as
    /// news, §16.4; a tombstone as it is). The caller holds the exclusive lock (`opened`).
    func resealUnderCurrentKey(keyID: [UInt8], in opened: OpenContainer) throws {
        try rebuildIdentityIndex(in: opened)
        let keys = try keys()
        if deviceState.providerSetting() == .enabled {
            try mappingErrors(file: deviceState.directory) { try deviceState.enable(indexKey: keys.indexKey) }
        }
        try resealStaleFiles(in: opened)
        try mappingErrors(file: deviceState.directory) { try deviceState.setTeamSealedKeyID(keyID) }
    }

    /// `resealUnderCurrentKey(keyID:in:)` under its own hold of the exclusive lock.
    func resealUnderCurrentKey(keyID: [UInt8]) throws {
        try exclusiveTransaction { opened in try resealUnderCurrentKey(keyID: keyID, in: opened) }
    }

    /// Re-seals, in one transaction, every record the current key does not open, and every
    /// tombstone: a new member (or one who missed the deletion) must open each under the key
    /// the list names (§16.5 rule 3), and nothing under a retired key may reach the remote
    /// again. The caller holds the exclusive lock.
    func resealStaleFiles(in opened: OpenContainer) throws {
        let keys = try keys()
        guard !keys.previous.isEmpty else { return }
        let index = try identityIndex(opened)
        try recover(index)
        var changes: [RecordChange] = []
        for id in try recordIDs(in: opened) {
            let bytes = try readRecordFile(id, in: opened)
            guard (try? RecordSealing.open(bytes, id: id, vaultID: vaultID, key: keys.recordKey)) == nil else { continue }
            var record = try mappingErrors(file: container.recordPath(id)) {
                try keys.openingWithRecordKey { try RecordSealing.open(bytes, id: id, vaultID: vaultID, key: $0) }
            }
            record.revision += 1
            let previous = try entries(of: id, index: index, manifest: index.readManifest())
            changes.append(RecordChange(
                id: id, sealed: try RecordSealing.seal(record, vaultID: vaultID, key: keys.recordKey),
                revision: record.revision, entries: Self.indexEntries(of: record, previous: previous), isAdd: false))
        }
        if !changes.isEmpty { try commit(changes, in: opened) }
        guard let tombstones = try opened.directoryIfPresent(GroupContainer.tombstonesName) else { return }
        for shardName in try fileSystem.contents(of: tombstones) where shardName.utf8.count == 2 {
            guard let shard = try? fileSystem.directory(shardName, in: tombstones) else { continue }
            for name in try fileSystem.contents(of: shard) {
                guard let id = try? RecordID(hex: name), let bytes = try? fileSystem.readFile(name, in: shard, limit: Tombstone.fileLength),
                      (try? Tombstone.open(bytes, id: id, vaultID: vaultID, key: keys.recordKey)) == nil
                else { continue }
                let tombstone = try mappingErrors(file: shard.path(of: name)) {
                    try keys.openingWithRecordKey { try Tombstone.open(bytes, id: id, vaultID: vaultID, key: $0) }
                }
                try fileSystem.writeAtomically(tombstone.sealed(vaultID: vaultID, key: keys.recordKey), to: name, in: shard, via: opened.temporary)
            }
        }
    }

    /// `resealStaleFiles(in:)` under its own hold of the exclusive lock.
    func resealStaleFiles() throws {
        try writeTransaction { opened throws in try resealStaleFiles(in: opened) }
    }
}

/// What a team and its members may be called.
enum TeamNames {
    /// A team's name is the last label of its group identifier: 1–64 of `[A-Za-z0-9_-]`.
    static func validate(_ name: String) throws(TeamError) {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }) else { throw .invalid("a team name is 1 to 64 letters, digits, '-' or '_', not '\(name)'") }
    }

    /// A member's name: 1–64 bytes of printable UTF-8.
    static func validate(memberName name: String) throws(TeamError) {
        guard (1...MembershipEntry.maximumNameLength).contains(name.utf8.count),
              name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { throw .invalid("a member's name is 1 to 64 bytes of printable text") }
    }
}
