import CofferFormat
import FoundationEssentials
import Synchronization

/// A vault in a group container: opened from its header, locked until a master password (or a
/// vault key from the keyring) unlocks it, and wiped again by `lock()`.
///
/// A `Vault` is safe to share between threads; every write takes the container's exclusive file
/// lock, so it is also safe to open the same container from several processes at once.
public final class Vault: Sendable {
    public let container: GroupContainer
    public let vaultID: VaultID
    public let configuration: VaultConfiguration
    /// This device's state for this vault (identity-store toggle, generation, usage).
    public let deviceState: DeviceState
    private let header: Mutex<VaultHeader>
    private let unlockedKeys: Mutex<VaultKeys?>
    /// Where a team's keys come from again when the ones held stopped opening its files: a
    /// rotation since they were taken (SPEC.md §16.5). Set by whoever unlocked the team through
    /// its owner; `nil` for a personal vault.
    private let teamKeySource = Mutex<(@Sendable () throws -> VaultKeys)?>(nil)
    /// The owner's identity, when this team was unlocked with it (`unlockTeam(identity:)`).
    private let unlockingIdentity = Mutex<PersonalIdentity?>(nil)
    /// The index manifest this vault last read (`readingIndex`).
    let openedManifest = OpenedManifest()
    package var fileSystem: FileSystem { configuration.fileSystem }

    /// The container held open for one operation (SPEC.md §3.4): checked private, nothing
    /// beneath it resolved through a link.
    package func openContainer() throws(StorageError) -> OpenContainer {
        try container.open(fileSystem: fileSystem)
    }

    /// The container's advisory lock (the `lock` file, opened beneath the container).
    package func fileLock(_ opened: OpenContainer) -> FileLock {
        FileLock(GroupContainer.lockName, in: opened.root, fileSystem: fileSystem)
    }

    private init(container: GroupContainer, header: VaultHeader, keys: VaultKeys?, configuration: VaultConfiguration) {
        self.container = container
        vaultID = header.vaultID
        self.header = Mutex(header)
        unlockedKeys = Mutex(keys)
        self.configuration = configuration
        deviceState = DeviceState(
            root: configuration.stateDirectory, vaultID: header.vaultID, container: container.path, fileSystem: configuration.fileSystem)
    }

    // MARK: Creating and opening

    /// Creates a vault with a fresh random vault id and vault key, wrapped under Argon2id of
    /// `masterPassword`. The container is created (0700) if needed and must hold no vault.
    /// - Returns: the new vault, unlocked.
    public static func create(
        in container: GroupContainer, masterPassword: SecureBytes, kdf: KDFParameters = .default,
        configuration: VaultConfiguration = .standard()
    ) throws(VaultError) -> Vault {
        guard !masterPassword.isEmptyPassword else { throw .invalidInput("the master password must not be empty") }
        ProcessHardening.disableCoreDumps()
        let fileSystem = configuration.fileSystem
        let vault = try mappingErrors(file: container.headerPath) {
            let opened = try container.open(create: true, fileSystem: fileSystem)
            let keys = try VaultKeys(vaultKey: SecureBytes.random(count: VaultKeys.length))
            let header = try wrap(keys.vaultKey, vaultID: VaultID.random(), password: masterPassword, kdf: kdf)
            try FileLock(GroupContainer.lockName, in: opened.root, fileSystem: fileSystem).withLock(.exclusive) {
                let existing = try fileSystem.contents(of: opened.root).filter { $0 != GroupContainer.lockName }
                guard existing.isEmpty else { throw VaultError.vaultExists(container: container.path) }
                for name in [GroupContainer.recordsName, GroupContainer.indexName, GroupContainer.temporaryName] {
                    _ = try opened.directory(name, create: true)
                }
                try fileSystem.writeAtomically(
                    header.encoded(), to: GroupContainer.headerName, in: opened.root, via: opened.temporary)
            }
            return Vault(container: container, header: header, keys: keys, configuration: configuration)
        }
        try vault.didUnlockWithPassword(keys: vault.keys())
        return vault
    }

    /// Opens the vault in `container`, locked. Checks the container's ownership and mode and the
    /// header's KDF costs against `policy`, and removes temp files left by a crashed writer.
    public static func open(
        _ container: GroupContainer, configuration: VaultConfiguration = .standard()
    ) throws(VaultError) -> Vault {
        let fileSystem = configuration.fileSystem
        return try mappingErrors(file: container.headerPath) {
            let opened: OpenContainer
            do {
                opened = try container.open(fileSystem: fileSystem)
            } catch let error as StorageError where error.isNotFound {
                throw VaultError.noVault(container: container.path)
            }
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length)
            } catch let error as StorageError where error.isNotFound {
                throw VaultError.noVault(container: container.path)
            }
            let vault = Vault(
                container: container, header: try VaultHeader.decode(bytes, policy: configuration.kdfPolicy), keys: nil,
                configuration: configuration)
            vault.removeStaleTemporaryFiles(opened)
            return vault
        }
    }

    // MARK: Locking

    public var isUnlocked: Bool { unlockedKeys.withLock { $0 != nil } }

    /// The KDF parameters the header asks for.
    public var kdfParameters: KDFParameters { header.withLock { $0.kdf } }

    /// Takes `header` as this vault's (sync adopting a master password changed on another
    /// device). It wraps the same vault key, so an unlocked vault stays unlocked.
    func adoptHeader(_ header: VaultHeader) {
        self.header.withLock { $0 = header }
    }

    /// Derives the key-encryption key from `masterPassword` and unwraps the vault key.
    /// - Throws: `VaultError.wrongPassword` when the password does not unwrap it.
    public func unlock(masterPassword: SecureBytes) throws(VaultError) {
        ProcessHardening.disableCoreDumps()
        let keys = try VaultKeys.mapping { try Self.unwrap(header.withLock { $0 }, password: masterPassword) }
        unlockedKeys.withLock { $0 = keys }
        try didUnlockWithPassword(keys: keys)
    }

    /// Unlocks with a vault key kept elsewhere (the kernel keyring, an embedding app's own store).
    public func unlock(vaultKey: SecureBytes) throws(VaultError) {
        unlock(keys: try VaultKeys.mapping { try VaultKeys(vaultKey: vaultKey) })
    }

    /// Unlocks with keys unwrapped elsewhere (a team's, earlier keys included: SPEC.md §16.4).
    package func unlock(keys: VaultKeys) {
        ProcessHardening.disableCoreDumps()
        unlockedKeys.withLock { $0 = keys }
    }

    /// Forgets every key; the guarded memory is wiped when the last reference goes.
    public func lock() {
        unlockedKeys.withLock { $0 = nil }
        teamKeySource.withLock { $0 = nil }
        unlockingIdentity.withLock { $0 = nil }
    }

    /// The identity this team was unlocked with, for a sync that must open a rotated key
    /// (`SyncOptions.teamIdentity`); `nil` when it was unlocked another way, or is locked.
    public var identityThatUnlockedIt: PersonalIdentity? { unlockingIdentity.withLock { $0 } }

    package func rememberUnlockingIdentity(_ identity: PersonalIdentity) { unlockingIdentity.withLock { $0 = identity } }

    /// Names where this team's current keys can be read again (its owner's identity, or the
    /// owner's session), for `refreshTeamKeys`.
    public func setTeamKeySource(_ source: (@Sendable () throws -> VaultKeys)?) {
        teamKeySource.withLock { $0 = source }
    }

    /// A team whose held key stopped opening its index or a record (another process rotated
    /// the key meanwhile) takes the keys `team.coffer` names now, earlier ones included.
    /// - Returns: whether other keys were taken (then a failed read is worth one more try);
    ///   `false` without a source, or when the source gives the keys held already.
    func refreshTeamKeys() -> Bool {
        guard let source = teamKeySource.withLock({ $0 }), let fresh = try? source() else { return false }
        let held = unlockedKeys.withLock { $0 }
        if let held, held.vaultKey == fresh.vaultKey, held.previous.count == fresh.previous.count {
            return false
        }
        unlock(keys: fresh)
        return true
    }

    /// The unlocked keys, or `VaultError.locked`.
    public func keys() throws(VaultError) -> VaultKeys {
        guard let keys = unlockedKeys.withLock({ $0 }) else { throw .locked }
        return keys
    }

    /// Rewraps the vault key under a new master password (and optionally new KDF costs).
    /// No record is rewritten: the vault key does not change.
    /// - Throws: `VaultError.wrongPassword` when `current` is wrong.
    public func changeMasterPassword(
        current: SecureBytes, new: SecureBytes, kdf: KDFParameters? = nil
    ) throws(VaultError) {
        guard !new.isEmptyPassword else { throw .invalidInput("the master password must not be empty") }
        try mappingErrors(file: container.headerPath) {
            let opened = try openContainer()
            try fileLock(opened).withLock(.exclusive) {
                let onDisk = try VaultHeader.decode(
                    fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length), policy: configuration.kdfPolicy)
                let keys = try Self.unwrap(onDisk, password: current)
                let rewrapped = try Self.wrap(keys.vaultKey, vaultID: vaultID, password: new, kdf: kdf ?? onDisk.kdf)
                try fileSystem.writeAtomically(
                    rewrapped.encoded(), to: GroupContainer.headerName, in: opened.root, via: opened.directory(GroupContainer.temporaryName, create: true))
                header.withLock { $0 = rewrapped }
                unlockedKeys.withLock { $0 = keys }
                // A quick unlock was made for the old header (SPEC.md §8.6): it ends with it.
                try? deviceState.remove(deviceState.quickUnlockName)
            }
        }
    }

    // MARK: Key wrapping (SPEC.md §4.3)

    /// Wraps `vaultKey` in a new header; `salt` and `nonce` are fixed only by test-vector checks.
    static func wrap(
        _ vaultKey: SecureBytes, vaultID: VaultID, password: SecureBytes, kdf: KDFParameters,
        salt: [UInt8]? = nil, nonce: [UInt8]? = nil
    ) throws -> VaultHeader {
        var header = VaultHeader(
            vaultID: vaultID, kdf: kdf, salt: try salt ?? SecureRandom.bytes(Argon2id.saltLength),
            nonce: try nonce ?? XChaCha20Poly1305.randomNonce(), wrappedKey: [])
        let keyEncryptionKey = try Argon2id.deriveKey(length: 32, password: password, salt: header.salt, parameters: kdf)
        header.wrappedKey = try vaultKey.withUnsafeBytes { (key) throws in
            try XChaCha20Poly1305.seal(key, key: keyEncryptionKey, nonce: header.nonce, associatedData: header.associatedData)
        }
        return header
    }

    static func unwrap(_ header: VaultHeader, password: SecureBytes) throws -> VaultKeys {
        let keyEncryptionKey = try Argon2id.deriveKey(
            length: 32, password: password, salt: header.salt, parameters: header.kdf)
        do {
            let vaultKey = try XChaCha20Poly1305.open(
                header.wrappedKey[...], key: keyEncryptionKey, nonce: header.nonce[...],
                associatedData: header.associatedData)
            return try VaultKeys(vaultKey: vaultKey)
        } catch CryptoError.authenticationFailed {
            // The header's own bytes are authenticated too, so a flipped header byte also lands
            // here; SPEC.md §4.3 explains why the two cannot be told apart.
            throw VaultError.wrongPassword
        }
    }

    /// Removes temp files of writers that died mid-write, if no writer is active right now.
    /// Best effort, and only in a `tmp/` that is a real directory of the container: a link
    /// planted there is left for `verify` to report and for the next writer to refuse, never
    /// followed (SPEC.md §3.4).
    func removeStaleTemporaryFiles(_ opened: OpenContainer) {
        guard let directory = try? opened.directoryIfPresent(GroupContainer.temporaryName), !fileSystem.isEmpty(directory) else { return }
        _ = try? fileLock(opened).withLockIfAvailable {
            for name in try fileSystem.contents(of: directory) { fileSystem.removeQuietly(name, in: directory) }
        }
    }
}

extension VaultKeys {
    static func mapping(_ body: () throws -> VaultKeys) throws(VaultError) -> VaultKeys {
        try mappingErrors(file: "vault key", body)
    }
}

extension SecureBytes {
    var isEmptyPassword: Bool { count == 0 }
}
