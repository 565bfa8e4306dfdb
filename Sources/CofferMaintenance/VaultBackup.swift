import CofferProvider
import FoundationEssentials

/// Offline backup and restore of a vault directory (SPEC.md §11). A backup is the container's
/// sealed files as they are: it needs no key to make, and reveals nothing a copy would not.
///
/// Every tree is walked through directory descriptors without following a link (§3.4): a link
/// or a FIFO in a container or in a backup directory is refused, never read through, and a
/// restore writes only beneath the directory it creates.
public enum VaultBackup {
    /// The files a backup holds, relative to the container: the header, a team's key file, every
    /// record, the manifest and the shards it names. Never `lock`, `tmp/` or unreferenced shards.
    /// - Parameter root: the container (or a backup directory) held open.
    static func snapshot(of root: Directory, fileSystem: FileSystem, check: DirectoryCheck) throws -> [TarArchive.Entry] {
        func file(_ name: String, in directory: Directory, relative: String, limit: Int) throws -> TarArchive.Entry {
            .init(path: relative, kind: .file, mode: 0o600, contents: try fileSystem.readFile(name, in: directory, limit: limit))
        }
        var entries: [TarArchive.Entry] = [try file(GroupContainer.headerName, in: root, relative: "vault.coffer", limit: VaultHeader.length)]
        // A team's key file: without it no member could open the restored team (SPEC.md §16.3).
        if try fileSystem.status(GroupContainer.teamKeysName, in: root) != nil {
            entries.append(try file(GroupContainer.teamKeysName, in: root, relative: GroupContainer.teamKeysName, limit: TeamKeyFile.maximumFileLength))
        }
        entries.append(.init(path: "records", kind: .directory, mode: 0o700, contents: []))
        if let records = try fileSystem.directoryIfPresent(GroupContainer.recordsName, in: root, check: check) {
            for shard in try fileSystem.contents(of: records).sorted() where isVaultPath("records/" + shard) {
                entries.append(.init(path: "records/" + shard, kind: .directory, mode: 0o700, contents: []))
                let directory = try fileSystem.directory(shard, in: records, check: check)
                for name in try fileSystem.contents(of: directory).sorted() {
                    let relative = "records/" + shard + "/" + name
                    guard isVaultPath(relative) else { continue }  // verify reports strays; a backup leaves them out
                    entries.append(try file(name, in: directory, relative: relative, limit: RecordEnvelope.maximumFileLength))
                }
            }
        }
        // Attachments (SPEC.md §6.7): sealed files, carried as they are.
        if let attachments = try fileSystem.directoryIfPresent(GroupContainer.attachmentsName, in: root, check: check) {
            entries.append(.init(path: "attachments", kind: .directory, mode: 0o700, contents: []))
            for shard in try fileSystem.contents(of: attachments).sorted() where isVaultPath("attachments/" + shard) {
                entries.append(.init(path: "attachments/" + shard, kind: .directory, mode: 0o700, contents: []))
                let directory = try fileSystem.directory(shard, in: attachments, check: check)
                for name in try fileSystem.contents(of: directory).sorted() {
                    let relative = "attachments/" + shard + "/" + name
                    guard isVaultPath(relative) else { continue }
                    entries.append(try file(name, in: directory, relative: relative, limit: 1 << 34))
                }
            }
        }
        entries.append(.init(path: "index", kind: .directory, mode: 0o700, contents: []))
        if let index = try fileSystem.directoryIfPresent(GroupContainer.indexName, in: root, check: check),
           try fileSystem.status(IdentityIndex.manifestName, in: index) != nil {
            entries.append(try file(IdentityIndex.manifestName, in: index, relative: "index/manifest", limit: IdentityIndex.maximumManifestLength))
            entries.append(.init(path: "index/shards", kind: .directory, mode: 0o700, contents: []))
            // Without the index key we cannot read which shards are live; a backup taken under
            // the lock right after recovery holds none that are stale, and verify flags any.
            if let shards = try fileSystem.directoryIfPresent("shards", in: index, check: check) {
                for name in try fileSystem.contents(of: shards).sorted() {
                    entries.append(try file(name, in: shards, relative: "index/shards/" + name, limit: IdentityIndex.maximumShardLength))
                }
            }
        }
        return entries
    }

    /// Writes a consistent snapshot to `destination`: a tar file (readable by GNU tar) when the
    /// name ends in `.tar`, gzip-compressed for `.tar.gz`/`.tgz`, zstd for `.tar.zst`/`.tzst`; a
    /// new directory for a name without an archive suffix; any other archive-like name (`.zip`,
    /// `.tar.xz`…) is refused. Holds the container's shared lock while reading, so concurrent
    /// writers wait and the copy is one generation.
    /// - Returns: the number of records in the backup.
    @discardableResult
    public static func backup(_ vault: Vault, to destination: String) throws(VaultError) -> Int {
        let fileSystem = vault.fileSystem
        return try mappingErrors(file: destination) {
            guard !BackupCompression.looksLikeOtherArchive(destination) else {
                throw VaultError.invalidInput(
                    "\(destination): Coffer writes .tar, .tar.gz (.tgz) and .tar.zst backups, or a directory for a name without a suffix")
            }
            guard try fileSystem.userPathStatus(destination) == nil else {
                throw VaultError.invalidInput("\(destination) already exists; a backup never overwrites")
            }
            let opened = try vault.openContainer()
            if let index = try? vault.identityIndex(opened), index.journalExists {
                try vault.fileLock(opened).withLock(.exclusive) { try vault.recover(index) }
            }
            let entries = try vault.fileLock(opened).withLock(.shared) {
                try snapshot(of: opened.root, fileSystem: fileSystem, check: .privateToUser)
            }
            if let compression = BackupCompression.forName(destination) {
                try fileSystem.writeUserFileExclusively(compression.compress(TarArchive.encode(entries)), to: destination)
            } else {
                let parent = try fileSystem.openDirectory(atPath: FileSystem.parentDirectory(of: destination), check: .anyOwner)
                let name = FileSystem.lastComponent(of: destination)
                try fileSystem.makeNewDirectory(name, in: parent)
                try write(entries, into: fileSystem.directory(name, in: parent), fileSystem: fileSystem)
            }
            return entries.filter { $0.path.hasPrefix("records/") && $0.kind == .file }.count
        }
    }

    /// Restores a backup (a directory or a `.tar`) into `container`, which must be empty or
    /// absent unless `replacing` is set. The new container is assembled next to the target and
    /// renamed into place, so a failure leaves the target as it was. `durable: false` skips the
    /// final flush, for a scratch copy that is only looked at (verify) and then removed.
    public static func restore(
        from source: String, into container: GroupContainer, replacing: Bool, fileSystem: FileSystem = .standard, durable: Bool = true
    ) throws(VaultError) {
        try mappingErrors(file: source) {
            // A plain tar of a container also holds its lock file and temp directory: not data.
            let entries = try readBackup(source, fileSystem: fileSystem).filter {
                $0.path != "lock" && $0.path != "tmp" && !$0.path.hasPrefix("tmp/")
            }
            guard entries.contains(where: { $0.path == "vault.coffer" }) else {
                throw VaultError.invalidInput("\(source) holds no vault.coffer: not a Coffer backup")
            }
            for entry in entries where !isVaultPath(entry.path) {
                throw VaultError.invalidInput("\(source): unexpected entry '\(entry.path.prefix(80))' in a vault backup")
            }
            let parent = try fileSystem.openDirectory(
                atPath: FileSystem.parentDirectory(of: container.path), create: true, createParents: true, check: .anyOwner)
            let name = FileSystem.lastComponent(of: container.path)
            if let existing = try fileSystem.status(name, in: parent) {
                guard existing.kind == .directory else { throw StorageError.wrongFileType(path: container.path) }
                let isEmpty = try fileSystem.contents(of: fileSystem.directory(name, in: parent)).isEmpty
                guard replacing || isEmpty else {
                    throw VaultError.vaultExists(container: container.path)
                }
            }
            let staging = name + ".restoring-" + Hex.encode(try SecureRandom.bytes(4))
            try fileSystem.makeNewDirectory(staging, in: parent)
            do {
                try write(entries, into: fileSystem.directory(staging, in: parent), fileSystem: fileSystem, durable: durable)
            } catch {
                fileSystem.removeTree(staging, in: parent)
                throw error
            }
            if try fileSystem.status(name, in: parent) != nil {
                let old = name + ".replaced-" + Hex.encode(try SecureRandom.bytes(4))
                try fileSystem.rename(name, in: parent, to: old, in: parent)
                try fileSystem.rename(staging, in: parent, to: name, in: parent)
                fileSystem.removeTree(old, in: parent)
            } else {
                try fileSystem.rename(staging, in: parent, to: name, in: parent)
            }
        }
    }

    /// The entries of a backup: a directory (a `coffer backup`, or a plain `cp -a` / `rsync -a`
    /// copy of a quiet vault, read as it is without taking its lock: it may sit on read-only
    /// media), or a tar.
    static func readBackup(_ source: String, fileSystem: FileSystem) throws -> [TarArchive.Entry] {
        guard let info = try fileSystem.userPathStatus(source) else { throw StorageError.system(operation: "open", path: source, errno: Errno.notFound.rawValue) }
        if info.kind == .directory {
            return try snapshot(of: fileSystem.openDirectory(atPath: source, check: .anyOwner), fileSystem: fileSystem, check: .anyOwner)
        }
        let stored = try fileSystem.readUserFile(source, limit: 4 << 30)
        let bytes: [UInt8]
        do { bytes = try BackupCompression.detect(stored).decompress(stored, limit: 4 << 30) } catch {
            throw VaultError.corrupt(file: source, reason: error.description)
        }
        do { return try TarArchive.decode(bytes) } catch let TarArchive.DecodeError.malformed(reason) {
            throw VaultError.corrupt(file: source, reason: reason)
        }
    }

    static func isVaultPath(_ path: String) -> Bool {
        let parts = path.split(separator: "/").map(String.init)
        switch parts.count {
        case 1: return ["vault.coffer", "records", "index", GroupContainer.teamKeysName, GroupContainer.attachmentsName].contains(parts[0])
        case 2: return ((parts[0] == "records" || parts[0] == GroupContainer.attachmentsName) && parts[1].count == 2 && Hex.decode(parts[1]) != nil)
            || (parts[0] == "index" && ["manifest", "shards", "journal"].contains(parts[1]))
        case 3: return (parts[0] == "records" && (try? RecordID(hex: parts[2])) != nil && parts[2].hasPrefix(parts[1]))
            || (parts[0] == GroupContainer.attachmentsName && (try? AttachmentID(hex: parts[2])) != nil && parts[2].hasPrefix(parts[1]))
            || (parts[0] == "index" && parts[1] == "shards" && (try? ShardID(hex: parts[2])) != nil)
        default: return false
        }
    }

    /// Writes `entries` (paths already checked by `isVaultPath`) beneath `root`, then flushes.
    static func write(_ entries: [TarArchive.Entry], into root: Directory, fileSystem: FileSystem, durable: Bool = true) throws {
        let temporary = try fileSystem.directory(GroupContainer.temporaryName, in: root, create: true)
        for entry in entries {
            var components = entry.path.split(separator: "/").map(String.init)
            let last = components.removeLast()
            var directory = root
            for component in components { directory = try fileSystem.directory(component, in: directory, create: true) }
            switch entry.kind {
            case .directory: try fileSystem.makeDirectory(last, in: directory)
            case .file: try fileSystem.writeAtomically(entry.contents, to: last, in: directory, via: temporary, durable: false)
            }
        }
        if durable { try fileSystem.syncFileSystems(of: [root]) }
    }
}
