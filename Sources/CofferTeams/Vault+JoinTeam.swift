import CofferStore
/// Joining a team from its git remote (SPEC.md §16.6).
extension Vault {
    /// Reads the membership list the remote at `url` holds — opened with `identity`'s sealed
    /// copy of the key and verified as a chain from its founding entry — without taking
    /// anything: what `coffer team join` shows (the founder's fingerprint) before the person
    /// confirms. It is fetched into a private temporary directory, removed afterwards.
    /// - Throws: `TeamError.notMember` when nobody added this identity.
    public static func peekTeam(at url: String, identity: PersonalIdentity, environment: Environment) throws -> TeamMembership {
        try refuseCredentials(in: url)
        let fileSystem = FileSystem.standard
        let scratch = try fileSystem.makeTemporaryDirectory(prefix: "coffer-join")
        defer {
            let cut = scratch.lastIndex(of: "/")!
            if let parent = try? fileSystem.openDirectory(atPath: String(scratch[..<cut]), check: .anyOwner) {
                fileSystem.removeTree(String(scratch[scratch.index(after: cut)...]), in: parent)
            }
        }
        let git = Git(container: scratch, environment: environment, deviceState: nil)
        try git.initialize()
        try git.setRemote(url)
        try git.fetch()
        guard let remote = try git.commit(Git.remoteBranch) else { throw SyncError.emptyRemote }
        return try remoteTeam(git, remote, identity: identity).membership
    }

    /// The team key file of `remote`, opened with `identity`'s slot and judged (the chain from
    /// `founder` when given).
    static func remoteTeam(_ git: Git, _ remote: String, identity: PersonalIdentity, founder: [UInt8]? = nil)
        throws -> (bytes: [UInt8], file: TeamKeyFile, membership: TeamMembership, keys: VaultKeys)
    {
        let name = GroupContainer.teamKeysName
        guard let object = try git.objects(in: git.tree(of: remote), under: [name])[name] else {
            throw VaultError.corrupt(file: "the remote's " + name, reason: "is missing: the remote holds no team")
        }
        let bytes = try git.blobs([object], limit: TeamKeyFile.maximumFileLength)[object] ?? []
        let file = try mappingErrors(file: "the remote's " + name) { try TeamKeyFile.decode(bytes) }
        do {
            let (membership, keys) = try TeamKeys.open(file, identity: identity, founder: founder)
            return (bytes, file, membership, keys)
        } catch TeamError.notMember {
            throw TeamError.notMember(team: "at " + (try git.remoteURL() ?? "the remote"))
        }
    }

    /// Joins the team at `url` into `container` as `identity` (an added member), pinning
    /// `founder` — the founding key the person confirmed. Every record is authenticated and
    /// taken as a clone does; on any failure the container is removed again.
    public static func joinTeam(
        from url: String, into container: GroupContainer, identity: PersonalIdentity, founder: [UInt8], owner: GroupContainer,
        configuration: VaultConfiguration = .standard(), options: SyncOptions = SyncOptions()
    ) throws -> (Vault, SyncReport) {
        try clone(from: url, into: container, configuration: configuration, options: options, layer: TeamSyncLayer()) { vault, git, remote in
            let (bytes, file, membership, keys) = try remoteTeam(git, remote, identity: identity, founder: founder)
            guard file.teamID == vault.vaultID else { throw TeamError.refused("team.coffer belongs to another vault than the header") }
            try mappingErrors(file: vault.deviceState.directory) {
                try vault.deviceState.setTeamOwner(FileSystem.absolutePath(owner.path))
                try vault.deviceState.setTeamSealedKeyID(membership.keyID)
            }
            try vault.writeTeamKeyFile(bytes, membership: membership, remoteCount: UInt64(membership.entries.count))
            vault.unlock(keys: keys)
            try vault.didUnlockWithIdentity(keys: keys)
        }
    }
}
