import CofferFormat
import FoundationEssentials

/// Where a synced container stands, without touching the network.
public struct SyncStatus: Sendable {
    public var remote: String?
    /// This device's commit, and the remote's as of the last fetch.
    public var head: String?
    public var remoteHead: String?
    /// The remote commit of the last completed sync.
    public var lastSync: String?
    /// Record, tombstone and header files changed in the container since the last commit.
    public var uncommittedFiles = 0
    /// Commits this device has that the remote (as last fetched) lacks, and the other way.
    public var ahead = 0
    public var behind = 0
}

extension Vault {
    /// Whether this container is a team's: it holds `team.coffer` (SPEC.md §16.5), and syncs
    /// only through the team's layer.
    public var isTeam: Bool {
        guard let opened = try? openContainer() else { return false }
        return (try? fileSystem.status(GroupContainer.teamKeysName, in: opened.root)) != nil
    }

    /// Makes the container a git repository (if it is not one yet) whose remote `origin` is
    /// `url`. Nothing is sent until `sync`.
    /// - Throws: `SyncError.credentialsInURL` for `https://user:password@…` (git's credential
    ///   helpers keep such secrets; its config file would keep them in clear).
    public func setSyncRemote(_ url: String, environment: Environment = .process) throws {
        try Self.refuseCredentials(in: url)
        let git = Git(container: container.path, environment: environment, deviceState: deviceState)
        try git.initialize()
        try git.setRemote(url)
    }

    /// Commits this device's changes, fetches, merges and (unless `options.push` is off) pushes
    /// (SPEC.md §15.4), with `layer`'s steps for a vault that has one (a team: CofferTeams'
    /// `sync(_:)` gives it). Needs the vault unlocked: everything fetched is authenticated with
    /// the vault's keys before it is used.
    /// - Throws: `SyncError` when git cannot run or reach the remote; `VaultError.corrupt` when
    ///   the remote holds anything that is not an authentic part of this vault (nothing is
    ///   merged then), or when a team vault comes without its layer.
    package func sync(_ options: SyncOptions, layer: (any SyncLayer)?) throws -> SyncReport {
        if isTeam && layer == nil {
            throw VaultError.corrupt(file: container.path + "/" + GroupContainer.teamKeysName, reason: "is a team's key file: a team syncs only through its membership layer")
        }
        try layer?.prepare(self, options)
        return try SyncSession(vault: self, options: options, layer: layer).run()
    }

    /// Whether the container is a git repository of Coffer's sync (a cheap look: no git runs,
    /// nothing is checked or adopted).
    public var isSyncedContainer: Bool {
        Git(container: container.path, environment: .process, deviceState: deviceState).exists
    }

    /// The remote this container syncs with, or `nil` when it does not sync (no network).
    public func syncRemote(environment: Environment = .process) -> String? {
        let git = Git(container: container.path, environment: environment, deviceState: deviceState)
        return git.exists ? (try? git.remoteURL()) ?? nil : nil
    }

    /// Where the container stands with its remote (no network; the remote as last fetched).
    public func syncStatus(environment: Environment = .process) throws -> SyncStatus {
        let git = Git(container: container.path, environment: environment, deviceState: deviceState)
        guard git.exists else { throw SyncError.notConfigured(container: container.path) }
        var status = SyncStatus()
        status.remote = try git.remoteURL()
        let refs = try git.syncRefs()
        (status.head, status.remoteHead, status.lastSync) = (refs.head, refs.remote, refs.synced)
        // The baseline needs the vault's keys (it reads the ledger): without them, or without
        // a baseline that holds, `git status` counts.
        let session = try? SyncSession(vault: self, options: SyncOptions(environment: environment), layer: nil)
        status.uncommittedFiles = try (try? session?.uncommittedFilesFromBaseline()) ?? git.uncommittedFiles()
        if let head = status.head, let remote = status.remoteHead {
            (status.ahead, status.behind) = try git.divergence(head, remote)
        } else if let head = status.head {
            status.ahead = try git.commitCount(head)
        }
        return status
    }

    /// A new device: clones the vault at `url` into `container` (which must be absent or empty),
    /// unlocks it with `masterPassword` to prove it is a vault this person can open, and takes
    /// every record after authenticating it. On any failure the container is removed again.
    /// - Returns: the vault, unlocked, and what the first sync did.
    public static func clone(
        from url: String, into container: GroupContainer, masterPassword: SecureBytes,
        configuration: VaultConfiguration = .standard(), options: SyncOptions = SyncOptions()
    ) throws -> (Vault, SyncReport) {
        try clone(from: url, into: container, configuration: configuration, options: options) { vault, _, _ in
            try vault.unlock(masterPassword: masterPassword)
        }
    }

    /// `clone`, with `unlock` proving the person may open the vault (a master password, or a
    /// team member's sealed key: `joinTeam`) before anything but the header is taken, and the
    /// first sync through `layer`.
    package static func clone(
        from url: String, into container: GroupContainer, configuration: VaultConfiguration, options: SyncOptions,
        layer: (any SyncLayer)? = nil, unlock: (Vault, Git, _ remoteCommit: String) throws -> Void
    ) throws -> (Vault, SyncReport) {
        try refuseCredentials(in: url)
        let fileSystem = configuration.fileSystem
        let existed = (try? fileSystem.userPathStatus(container.path)) != nil
        let opened = try mappingErrors(file: container.path) { try container.open(create: true, fileSystem: fileSystem) }
        guard try mappingErrors(file: container.path, { try fileSystem.contents(of: opened.root) }).isEmpty else {
            throw SyncError.targetNotEmpty(container.path)
        }
        var cloned: Vault?
        do {
            let git = Git(container: container.path, environment: options.environment, deviceState: nil)
            try git.initialize()
            try git.setRemote(url)
            try git.fetch()
            guard let remote = try git.commit(Git.remoteBranch) else { throw SyncError.emptyRemote }
            let headerObject = try git.objects(in: git.tree(of: remote), under: [GroupContainer.headerName])[GroupContainer.headerName]
            guard let headerObject else { throw VaultError.corrupt(file: "the remote's " + GroupContainer.headerName, reason: "is missing: the remote holds no vault") }
            let header = try git.blobs([headerObject], limit: VaultHeader.length)[headerObject] ?? []
            try mappingErrors(file: "the remote's " + GroupContainer.headerName) {
                _ = try VaultHeader.decode(header, policy: configuration.kdfPolicy)
                for name in [GroupContainer.recordsName, GroupContainer.indexName, GroupContainer.temporaryName] {
                    _ = try opened.directory(name, create: true)
                }
                try fileSystem.writeAtomically(header, to: GroupContainer.headerName, in: opened.root, via: opened.temporary)
            }
            let vault = try Vault.open(container, configuration: configuration)
            cloned = vault
            // A new container starts its own generation mark here (SPEC.md §7.6): what another
            // container of this vault, or an earlier one at this path, had seen is not its.
            try mappingErrors(file: vault.deviceState.directory) {
                try vault.deviceState.forgetGeneration()
                try vault.deviceState.pinSyncRemote(url)
            }
            try unlock(vault, git, remote)
            let report = try SyncSession(vault: vault, options: options, layer: layer).run(adoptingRemote: true)
            return (vault, report)
        } catch {
            cloned?.deviceState.forgetContainer()
            for name in (try? fileSystem.contents(of: opened.root)) ?? [] { fileSystem.removeTree(name, in: opened.root) }
            if !existed { fileSystem.removeEmptyDirectory(container.path) }
            throw error
        }
    }

    /// Whether `url` carries a password in its authority (`scheme://user:password@host`).
    package static func refuseCredentials(in url: String) throws(SyncError) {
        let parts = url.split(separator: "://", maxSplits: 1)
        guard parts.count == 2 else { return }
        let authority = parts[1].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return }
        if authority[..<at].contains(":") { throw .credentialsInURL }
    }
}
