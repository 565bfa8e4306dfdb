import FoundationEssentials
import Glibc

/// Offline backup and restore of a vault directory (SPEC.md §10). A backup is the container's
/// sealed files as they are: it needs no key to make, and reveals nothing a copy would not.
public enum VaultBackup {
    /// The files a backup holds, relative to the container: the header, every record, the
    /// manifest and the shards it names. Never `lock`, `tmp/` or unreferenced shards.
    static func snapshot(ofDirectory directory: String, fileSystem: FileSystem) throws -> [TarArchive.Entry] {
        let container = GroupContainer(path: directory)
        func file(_ relative: String, limit: Int) throws -> TarArchive.Entry {
            .init(path: relative, kind: .file, mode: 0o600, contents: try fileSystem.readFile(container.path + "/" + relative, limit: limit))
        }
        var entries: [TarArchive.Entry] = [try file("vault.coffer", limit: VaultHeader.length)]
        entries.append(.init(path: "records", kind: .directory, mode: 0o700, contents: []))
        for shard in try fileSystem.contentsOfDirectory(container.recordsDirectory).sorted() where isVaultPath("records/" + shard) {
            entries.append(.init(path: "records/" + shard, kind: .directory, mode: 0o700, contents: []))
            for name in try fileSystem.contentsOfDirectory(container.recordsDirectory + "/" + shard).sorted() {
                let relative = "records/" + shard + "/" + name
                guard isVaultPath(relative) else { continue }  // verify reports strays; a backup leaves them out
                entries.append(try file(relative, limit: RecordEnvelope.maximumFileLength))
            }
        }
        entries.append(.init(path: "index", kind: .directory, mode: 0o700, contents: []))
        if try fileSystem.status(container.indexDirectory + "/manifest") != nil {
            entries.append(try file("index/manifest", limit: IdentityIndex.maximumManifestLength))
            entries.append(.init(path: "index/shards", kind: .directory, mode: 0o700, contents: []))
            // Without the index key we cannot read which shards are live; a backup taken under
            // the lock right after recovery holds none that are stale, and verify flags any.
            for name in try fileSystem.contentsOfDirectory(container.indexDirectory + "/shards").sorted() {
                entries.append(try file("index/shards/" + name, limit: IdentityIndex.maximumShardLength))
            }
        }
        return entries
    }

    /// Writes a consistent snapshot to `destination`: a `.tar` file (readable by GNU tar) when
    /// the name ends in `.tar`, else a new directory. Holds the container's shared lock while
    /// reading, so concurrent writers wait and the copy is one generation.
    /// - Returns: the number of records in the backup.
    @discardableResult
    public static func backup(_ vault: Vault, to destination: String) throws(VaultError) -> Int {
        let fileSystem = vault.fileSystem
        return try mappingErrors(file: destination) {
            guard try fileSystem.status(destination) == nil else {
                throw VaultError.invalidInput("\(destination) already exists; a backup never overwrites")
            }
            if let index = try? vault.identityIndex(), index.journalExists {
                try vault.fileLock.withLock(.exclusive) { try vault.recover(index) }
            }
            let entries = try vault.fileLock.withLock(.shared) {
                try snapshot(ofDirectory: vault.container.path, fileSystem: fileSystem)
            }
            if destination.hasSuffix(".tar") {
                let parent = FileSystem.parentDirectory(of: destination)
                try fileSystem.writeAtomically(TarArchive.encode(entries), to: destination, temporaryDirectory: parent)
            } else {
                try write(entries, into: destination, fileSystem: fileSystem)
            }
            return entries.filter { $0.path.hasPrefix("records/") && $0.kind == .file }.count
        }
    }

    /// Restores a backup (a directory or a `.tar`) into `container`, which must be empty or
    /// absent unless `replacing` is set. The new container is assembled next to the target and
    /// renamed into place, so a failure leaves the target as it was.
    public static func restore(
        from source: String, into container: GroupContainer, replacing: Bool, fileSystem: FileSystem = .standard
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
            if let existing = try fileSystem.status(container.path) {
                guard existing.st_mode & S_IFMT == S_IFDIR else { throw StorageError.wrongFileType(path: container.path) }
                let isEmpty = try fileSystem.contentsOfDirectory(container.path).isEmpty
                guard replacing || isEmpty else {
                    throw VaultError.vaultExists(container: container.path)
                }
            }
            let parent = FileSystem.parentDirectory(of: container.path)
            try GroupContainer(path: parent).prepareParents(fileSystem: fileSystem)
            let staging = container.path + ".restoring-" + Hex.encode(try SecureRandom.bytes(4))
            try write(entries, into: staging, fileSystem: fileSystem)
            if try fileSystem.status(container.path) != nil {
                let old = container.path + ".replaced-" + Hex.encode(try SecureRandom.bytes(4))
                try fileSystem.rename(container.path, to: old)
                try fileSystem.rename(staging, to: container.path)
                try? FileManager.default.removeItem(atPath: old)
            } else {
                try fileSystem.rename(staging, to: container.path)
            }
        }
    }

    static func readBackup(_ source: String, fileSystem: FileSystem) throws -> [TarArchive.Entry] {
        guard let info = try fileSystem.status(source) else { throw StorageError.system(operation: "open", path: source, errno: ENOENT) }
        if info.st_mode & S_IFMT == S_IFDIR {
            // A directory backup, or a plain `cp -a` / `rsync -a` copy of a quiet vault; read
            // as it is, without taking its lock (it may sit on read-only media).
            return try snapshot(ofDirectory: source, fileSystem: fileSystem)
        }
        let bytes = try fileSystem.readFile(source, limit: 4 << 30)
        do { return try TarArchive.decode(bytes) } catch let TarArchive.DecodeError.malformed(reason) {
            throw VaultError.invalidInput("\(source): \(reason)")
        }
    }

    static func isVaultPath(_ path: String) -> Bool {
        let parts = path.split(separator: "/").map(String.init)
        switch parts.count {
        case 1: return ["vault.coffer", "records", "index"].contains(parts[0])
        case 2: return (parts[0] == "records" && parts[1].count == 2 && Hex.decode(parts[1]) != nil)
            || (parts[0] == "index" && ["manifest", "shards", "journal"].contains(parts[1]))
        case 3: return (parts[0] == "records" && (try? RecordID(hex: parts[2])) != nil && parts[2].hasPrefix(parts[1]))
            || (parts[0] == "index" && parts[1] == "shards" && (try? ShardID(hex: parts[2])) != nil)
        default: return false
        }
    }

    static func write(_ entries: [TarArchive.Entry], into directory: String, fileSystem: FileSystem) throws {
        try fileSystem.makeDirectory(directory)
        try fileSystem.makeDirectory(directory + "/tmp")
        for entry in entries {
            let path = directory + "/" + entry.path
            switch entry.kind {
            case .directory: try fileSystem.makeDirectory(path)
            case .file:
                let parent = FileSystem.parentDirectory(of: path)
                try fileSystem.makeDirectory(parent)
                try fileSystem.writeAtomically(entry.contents, to: path, temporaryDirectory: directory + "/tmp", durable: false)
            }
        }
        try fileSystem.syncFileSystem(containing: directory)
    }
}
