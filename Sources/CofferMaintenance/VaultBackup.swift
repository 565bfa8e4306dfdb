import CofferProvider
import FoundationEssentials

/// Offline backup and restore of a vault directory (SPEC.md §11). A backup is the container's
/// sealed files as they are: it needs no key to make, and reveals nothing a copy would not.
///
/// Every tree is walked through directory descriptors without following a link (§3.4): a link
/// or a FIFO in a container or in a backup directory is refused, never read through, and a
/// restore writes only beneath the directory it creates.
public enum VaultBackup {
    /// One entry of a backup: a directory, a small file read whole, or an attachment file copied
    /// in pieces when it is written (an attachment of any size passes in constant memory).
    struct Entry {
        enum Source {
            case directory
            case bytes([UInt8])
            /// `name` in `directory`, `size` bytes when the snapshot was taken.
            case file(name: String, directory: Directory, size: UInt64)
        }

        let path: String
        let source: Source

        var isDirectory: Bool { if case .directory = source { true } else { false } }

        /// Its tar header: a directory 0700, a file 0600 of its size.
        var header: TarArchive.Header {
            let size: UInt64 = switch source {
            case .directory: 0
            case .bytes(let bytes): UInt64(bytes.count)
            case .file(_, _, let size): size
            }
            return TarArchive.Header(path: path, kind: isDirectory ? .directory : .file, mode: isDirectory ? 0o700 : 0o600, size: size)
        }
    }

    /// The files a backup holds, relative to the container: the header, a team's key file, every
    /// record and attachment file, the manifest and the shards it names. Never `lock`, `tmp/`,
    /// `incoming/` or unreferenced shards.
    /// - Parameter root: the container (or a backup directory) held open.
    static func snapshot(of root: Directory, fileSystem: FileSystem, check: DirectoryCheck) throws -> [Entry] {
        func file(_ name: String, in directory: Directory, relative: String, limit: Int) throws -> Entry {
            Entry(path: relative, source: .bytes(try fileSystem.readFile(name, in: directory, limit: limit)))
        }
        var entries: [Entry] = [try file(GroupContainer.headerName, in: root, relative: "vault.coffer", limit: VaultHeader.length)]
        // A team's key file: without it no member could open the restored team (SPEC.md §16.3).
        if try fileSystem.status(GroupContainer.teamKeysName, in: root) != nil {
            entries.append(try file(GroupContainer.teamKeysName, in: root, relative: GroupContainer.teamKeysName, limit: TeamKeyFile.maximumFileLength))
        }
        for top in [GroupContainer.recordsName, GroupContainer.attachmentsName] {
            guard let sharded = try fileSystem.directoryIfPresent(top, in: root, check: check) else {
                if top == GroupContainer.recordsName { entries.append(Entry(path: top, source: .directory)) }
                continue
            }
            entries.append(Entry(path: top, source: .directory))
            for shard in try fileSystem.contents(of: sharded).sorted() where isVaultPath(top + "/" + shard) {
                entries.append(Entry(path: top + "/" + shard, source: .directory))
                let directory = try fileSystem.directory(shard, in: sharded, check: check)
                for name in try fileSystem.contents(of: directory).sorted() {
                    let relative = top + "/" + shard + "/" + name
                    guard isVaultPath(relative) else { continue }  // verify reports strays; a backup leaves them out
                    if top == GroupContainer.recordsName {
                        entries.append(try file(name, in: directory, relative: relative, limit: RecordEnvelope.maximumFileLength))
                    } else if let status = try fileSystem.status(name, in: directory) {
                        // Attachments (SPEC.md §6.7): sealed files, carried as they are.
                        guard status.kind == .regular else { throw StorageError.wrongFileType(path: directory.path(of: name)) }
                        entries.append(Entry(path: relative, source: .file(name: name, directory: directory, size: UInt64(status.size))))
                    }
                }
            }
        }
        entries.append(Entry(path: "index", source: .directory))
        if let index = try fileSystem.directoryIfPresent(GroupContainer.indexName, in: root, check: check),
           try fileSystem.status(IdentityIndex.manifestName, in: index) != nil {
            entries.append(try file(IdentityIndex.manifestName, in: index, relative: "index/manifest", limit: IdentityIndex.maximumManifestLength))
            entries.append(Entry(path: "index/shards", source: .directory))
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
            // Read and written under the lock: an attachment is copied as it is read.
            let entries = try vault.fileLock(opened).withLock(.shared) {
                let entries = try snapshot(of: opened.root, fileSystem: fileSystem, check: .privateToUser)
                if let compression = BackupCompression.forName(destination) {
                    try fileSystem.writeUserFileStreaming(to: destination, replacing: false) { file in
                        let compressor = try CompressingWriter(compression) { try file.write($0) }
                        let tar = TarWriter { try compressor.write($0) }
                        for entry in entries { try add(entry, to: tar, fileSystem: fileSystem) }
                        try tar.finish()
                        try compressor.finish()
                    }
                } else {
                    let parent = try fileSystem.openDirectory(atPath: FileSystem.parentDirectory(of: destination), check: .anyOwner)
                    let name = FileSystem.lastComponent(of: destination)
                    try fileSystem.makeNewDirectory(name, in: parent)
                    try write(entries, into: fileSystem.directory(name, in: parent), fileSystem: fileSystem)
                }
                return entries
            }
            return entries.filter { $0.path.hasPrefix("records/") && !$0.isDirectory }.count
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
            guard let info = try fileSystem.userPathStatus(source) else {
                throw StorageError.system(operation: "open", path: source, errno: Errno.notFound.rawValue)
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
                let root = try fileSystem.directory(staging, in: parent)
                if info.kind == .directory {
                    let entries = try snapshot(of: fileSystem.openDirectory(atPath: source, check: .anyOwner), fileSystem: fileSystem, check: .anyOwner)
                    try write(entries, into: root, fileSystem: fileSystem, durable: durable)
                } else {
                    try extract(source, into: root, fileSystem: fileSystem, durable: durable)
                }
                guard try fileSystem.status("vault.coffer", in: root) != nil else {
                    throw VaultError.invalidInput("\(source) holds no vault.coffer: not a Coffer backup")
                }
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

    /// Writes the entries of the tar backup `source` (plain, gzip or zstd by its first bytes)
    /// beneath `root` as they are read. A plain tar of a container also holds its lock file and
    /// temp directory: not data, skipped; any other path outside the layout is refused.
    static func extract(_ source: String, into root: Directory, fileSystem: FileSystem, durable: Bool) throws {
        let file = try fileSystem.openUserFileForReading(source)
        var position = 0
        let reader: DecompressingReader
        let tar: TarReader
        do {
            reader = try DecompressingReader(BackupCompression.detect(file.read(at: 0, count: min(4, file.size)) ?? [])) { buffer in
                let count = try file.read(into: buffer, at: position)
                position += count
                return count
            }
            tar = TarReader { try reader.read(into: $0) }
        } catch {
            throw VaultError.corrupt(file: source, reason: error.description)
        }
        let temporary = try fileSystem.directory(GroupContainer.temporaryName, in: root, create: true)
        do {
            while let header = try tar.next() {
                guard header.path != ".", header.path != "lock", header.path != "tmp", !header.path.hasPrefix("tmp/") else { continue }
                guard isVaultPath(header.path) else {
                    throw VaultError.invalidInput("\(source): unexpected entry '\(header.path.prefix(80))' in a vault backup")
                }
                guard header.size <= largestFile(at: header.path) else {
                    throw VaultError.corrupt(file: source, reason: "\(header.path) is \(header.size) bytes, more than any such file")
                }
                try place(header.path, isDirectory: header.kind == .directory, into: root, via: temporary, fileSystem: fileSystem) { write in
                    try tar.contents(write)
                }
            }
        } catch let error as TarArchive.DecodeError {
            guard case .malformed(let reason) = error else { throw error }
            throw VaultError.corrupt(file: source, reason: reason)
        } catch let error as CompressionError {
            throw VaultError.corrupt(file: source, reason: error.description)
        }
        if durable { try fileSystem.syncFileSystems(of: [root]) }
    }

    /// The largest file a path of the layout may be (a backup's entry past it is refused before
    /// it is written); an attachment file has no bound but the disk.
    static func largestFile(at path: String) -> UInt64 {
        if path == "vault.coffer" { return UInt64(VaultHeader.length) }
        if path == GroupContainer.teamKeysName { return UInt64(TeamKeyFile.maximumFileLength) }
        if path.hasPrefix("records/") { return UInt64(RecordEnvelope.maximumFileLength) }
        if path == "index/manifest" { return UInt64(IdentityIndex.maximumManifestLength) }
        if path.hasPrefix("index/") { return UInt64(max(IdentityIndex.maximumShardLength, IdentityIndex.maximumManifestLength)) }
        return .max
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
    static func write(_ entries: [Entry], into root: Directory, fileSystem: FileSystem, durable: Bool = true) throws {
        let temporary = try fileSystem.directory(GroupContainer.temporaryName, in: root, create: true)
        for entry in entries {
            try place(entry.path, isDirectory: entry.isDirectory, into: root, via: temporary, fileSystem: fileSystem) { write in
                try contents(of: entry, fileSystem: fileSystem, write)
            }
        }
        if durable { try fileSystem.syncFileSystems(of: [root]) }
    }

    /// Adds `entry` to a tar being written.
    static func add(_ entry: Entry, to tar: TarWriter, fileSystem: FileSystem) throws {
        try tar.add(entry.header) { write in try contents(of: entry, fileSystem: fileSystem, write) }
    }

    /// Passes a file entry's bytes to `write`: held ones at once, a file's in pieces of 1 MiB.
    private static func contents(of entry: Entry, fileSystem: FileSystem, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch entry.source {
        case .directory: return
        case .bytes(let bytes): try bytes.withUnsafeBytes { try write($0) }
        case .file(let name, let directory, let size):
            guard let file = try fileSystem.openForReading(name, in: directory) else {
                throw StorageError.system(operation: "open", path: directory.path(of: name), errno: Errno.notFound.rawValue)
            }
            var piece = [UInt8](repeating: 0, count: 1 << 20)
            var offset = 0
            while UInt64(offset) < size {
                let wanted = Int(min(UInt64(piece.count), size - UInt64(offset)))
                let count = try piece.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0.prefix(wanted)), at: offset) }
                guard count == wanted else { throw VaultError.corrupt(file: directory.path(of: name), reason: "it shrank while it was copied") }
                try piece.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
                offset += count
            }
        }
    }

    /// Makes the directory `path` beneath `root`, or the file `path` from what `contents` writes:
    /// written in `temporary` and renamed into place, so no half-written file stands in the tree.
    private static func place(
        _ path: String, isDirectory: Bool, into root: Directory, via temporary: Directory, fileSystem: FileSystem,
        contents: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        var components = path.split(separator: "/").map(String.init)
        let last = components.removeLast()
        var directory = root
        for component in components { directory = try fileSystem.directory(component, in: directory, create: true) }
        if isDirectory { return try fileSystem.makeDirectory(last, in: directory) }
        let file = try fileSystem.createStreamedFile(in: temporary)
        try contents { try file.write($0) }
        try file.finish(durable: false)
        try fileSystem.rename(file.name, in: temporary, to: last, in: directory)
    }
}
