import CofferFormat
import Synchronization

/// The App Group container analogue: one private directory that the CLI, helpers and embedding
/// apps share, like `FileManager.containerURL(forSecurityApplicationGroupIdentifier:)` on iOS.
///
/// Layout (SPEC.md §3.1):
///
///     <container>/vault.coffer         vault header
///     <container>/lock                 advisory lock file (empty)
///     <container>/records/<xx>/<id>    sealed records, sharded by the id's first byte
///     <container>/index/               sealed identity index (see IdentityStore)
///     <container>/tmp/                 temp files of atomic writes; stale ones are removed
public struct GroupContainer: Sendable, Equatable {
    /// The group used when none is given.
    public static let defaultGroupIdentifier = "group.coffer.default"
    static let maximumGroupIdentifierLength = 128

    /// Absolute or relative path of the container directory, without a trailing slash.
    public let path: String

    /// A container at an explicit directory.
    public init(path: String) {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
    }

    /// `path` from the root, as `FileSystem.absolutePath` makes it (the device state's container
    /// tag, SPEC.md §7.6, hashes that same string): what another process, such as the fill
    /// agent, must be told.
    public var absolutePath: String { FileSystem.absolutePath(path) }

    /// The container of a group: `$XDG_DATA_HOME/coffer/group-containers/<id>`, with
    /// `$XDG_DATA_HOME` defaulting to `~/.local/share`.
    /// - Throws: `StorageError.invalidGroupIdentifier` for an unsafe identifier.
    public init(groupIdentifier: String, environment: Environment) throws(StorageError) {
        try Self.validate(groupIdentifier: groupIdentifier)
        self.init(path: Self.dataHome(environment) + "/coffer/group-containers/" + groupIdentifier)
    }

    /// Accepts reverse-DNS names: letters, digits, `-`, `_` and single dots between labels.
    public static func validate(groupIdentifier: String) throws(StorageError) {
        let bytes = Array(groupIdentifier.utf8)
        guard !bytes.isEmpty else { throw .invalidGroupIdentifier("empty") }
        guard bytes.count <= maximumGroupIdentifierLength else {
            throw .invalidGroupIdentifier("longer than \(maximumGroupIdentifierLength) bytes")
        }
        let labels = groupIdentifier.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidGroupIdentifier("empty label (leading, trailing or double dot)")
        }
        let allowed = bytes.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard allowed else { throw .invalidGroupIdentifier("only letters, digits, '-', '_' and '.' are allowed") }
    }

    /// `$XDG_DATA_HOME`, else `$HOME/.local/share`, else the passwd entry's home.
    package static func dataHome(_ environment: Environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg }
        return homeDirectory(environment) + "/.local/share"
    }

    static func homeDirectory(_ environment: Environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let directory = CurrentUser.homeDirectory { return directory }
        return "/"
    }

    // MARK: Layout (names within the container, SPEC.md §3.1)

    package static let headerName = "vault.coffer"
    package static let lockName = "lock"
    package static let recordsName = "records"
    package static let indexName = "index"
    package static let temporaryName = "tmp"
    /// Present only in a synced container (SPEC.md §15).
    package static let tombstonesName = "tombstones"
    package static let headerSealName = "vault.seal"
    /// A team vault's membership chain and sealed keys (SPEC.md §16.3).
    package static let teamKeysName = "team.coffer"
    package static let gitName = ".git"
    /// Sealed attachment files, sharded as records are (SPEC.md §6.7).
    package static let attachmentsName = "attachments"
    /// Attachments being written: never shared, never backed up (SPEC.md §6.7).
    package static let incomingName = "incoming"

    public var headerPath: String { path + "/" + Self.headerName }
    public var recordsDirectory: String { path + "/" + Self.recordsName }
    public var indexDirectory: String { path + "/" + Self.indexName }
    public var temporaryDirectory: String { path + "/" + Self.temporaryName }

    /// The name of a record's shard directory: its id's first byte in hex. Records are sharded
    /// by it: 256 directories, ~400 files each at 100,000.
    static func shardName(of id: RecordID) -> String { Hex.encode([id.firstByte]) }

    static func shardName(of id: AttachmentID) -> String { Hex.encode([id.firstByte]) }

    /// Where attachment `id` lives, for messages: `attachments/<xx>/<id>`.
    public func attachmentPath(_ id: AttachmentID) -> String {
        path + "/" + Self.attachmentsName + "/" + Self.shardName(of: id) + "/" + id.hex
    }

    /// Where record `id` lives, for messages: `records/<xx>/<id>`.
    public func recordPath(_ id: RecordID) -> String {
        recordsDirectory + "/" + Self.shardName(of: id) + "/" + id.hex
    }

    // MARK: Opening

    /// Opens the container directory (creating it and its missing parents, 0700, when `create`
    /// is set) and checks that it is a directory of this user's that no one else may enter
    /// (SPEC.md §3.5). Nothing beneath it is resolved through a link (§3.4).
    public func open(create: Bool = false, fileSystem: FileSystem) throws(StorageError) -> OpenContainer {
        OpenContainer(
            container: self, fileSystem: fileSystem,
            root: try fileSystem.openDirectory(atPath: path, create: create, createParents: create))
    }
}

/// A container held open for one operation: its root, and its directories opened beneath it on
/// first use (never through a link, each checked private, SPEC.md §3.4–§3.5).
///
/// Opened again for every operation rather than kept for the life of a process: a restore
/// renames a new container into place, and a long-lived host must see it.
public final class OpenContainer: @unchecked Sendable {
    // @unchecked: the caches are guarded by `lock`.
    public let container: GroupContainer
    public let root: Directory
    let fileSystem: FileSystem
    /// The directories opened so far, by relative path: a handful, so a list (a `String`-keyed
    /// `Dictionary` costs its first user a scan of every protocol conformance in the binary).
    private let lock = Mutex<[(String, Directory)]>([])
    /// The shard directories opened so far (`cachedShard`).
    private let shardLock = Mutex<[Directory?]>(Array(repeating: nil, count: 512))

    init(container: GroupContainer, fileSystem: FileSystem, root: Directory) {
        self.container = container
        self.fileSystem = fileSystem
        self.root = root
    }

    /// `records/`, `index/` or `tmp/`; made (0700) when `create` is set.
    func directory(_ name: String, create: Bool = false) throws(StorageError) -> Directory {
        try cached(name) { () throws(StorageError) in try fileSystem.directory(name, in: root, create: create) }
    }

    /// `records/`, `index/` or `tmp/` when present; any other problem throws.
    package func directoryIfPresent(_ name: String) throws(StorageError) -> Directory? {
        do {
            return try directory(name)
        } catch where error.isNotFound {
            return nil
        }
    }

    var records: Directory { get throws(StorageError) { try directory(GroupContainer.recordsName) } }
    var index: Directory { get throws(StorageError) { try directory(GroupContainer.indexName) } }
    package var temporary: Directory { get throws(StorageError) { try directory(GroupContainer.temporaryName) } }

    /// `index/shards/`, made when `create` is set.
    package func shards(create: Bool = false) throws(StorageError) -> Directory {
        try cached("index/shards") { () throws(StorageError) in
            try fileSystem.directory("shards", in: try directory(GroupContainer.indexName, create: create), create: create)
        }
    }

    /// The shard directory `records/<xx>` of record `id`, made when `create` is set (and
    /// `records/` fsynced then, unless not `durable`: a bulk write's `syncFileSystems` covers it).
    func shard(of id: RecordID, create: Bool = false, durable: Bool = true) throws(StorageError) -> Directory {
        try cachedShard(id.firstByte, of: GroupContainer.recordsName, offset: 0) { () throws(StorageError) in
            try fileSystem.directory(
                GroupContainer.shardName(of: id), in: try directory(GroupContainer.recordsName, create: create), create: create, durable: durable)
        }
    }

    /// The shard directory `attachments/<xx>` of attachment `id`, made when `create` is set.
    func shard(of id: AttachmentID, create: Bool = false) throws(StorageError) -> Directory {
        try cachedShard(id.firstByte, of: GroupContainer.attachmentsName, offset: 256) { () throws(StorageError) in
            try fileSystem.directory(GroupContainer.shardName(of: id), in: try directory(GroupContainer.attachmentsName, create: create), create: create)
        }
    }

    /// A shard directory by its byte: a verify or an import asks a million times, so a fixed
    /// table (records at 0–255, attachments at 256–511) rather than a search by name.
    private func cachedShard(_ byte: UInt8, of parent: String, offset: Int, _ open: () throws(StorageError) -> Directory) throws(StorageError) -> Directory {
        let slot = offset + Int(byte)
        if let found = shardLock.withLock({ $0[slot] }) { return found }
        let opened = try open()
        shardLock.withLock { $0[slot] = opened }
        return opened
    }

    private func cached(_ key: String, _ open: () throws(StorageError) -> Directory) throws(StorageError) -> Directory {
        if let found = lock.withLock({ $0.first { $0.0 == key }?.1 }) { return found }
        let opened = try open()
        lock.withLock { $0.append((key, opened)) }
        return opened
    }
}
