import Glibc

/// The App Group container analogue: one private directory that the CLI, helpers and embedding
/// apps share, like `FileManager.containerURL(forSecurityApplicationGroupIdentifier:)` on iOS.
///
/// Layout (SPEC.md §2.1):
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
    static func dataHome(_ environment: Environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg }
        return homeDirectory(environment) + "/.local/share"
    }

    static func homeDirectory(_ environment: Environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    // MARK: Layout

    public var headerPath: String { path + "/vault.coffer" }
    public var lockPath: String { path + "/lock" }
    public var recordsDirectory: String { path + "/records" }
    public var indexDirectory: String { path + "/index" }
    public var temporaryDirectory: String { path + "/tmp" }

    /// Records are sharded by the first byte of their id: 256 directories, ~400 files each at 100,000.
    public func shardDirectory(of id: RecordID) -> String {
        recordsDirectory + "/" + Self.shardName(of: id)
    }

    /// The name of a record's shard directory: its id's first byte in hex.
    static func shardName(of id: RecordID) -> String { Hex.encode([id.firstByte]) }

    public func recordPath(_ id: RecordID) -> String {
        shardDirectory(of: id) + "/" + id.hex
    }

    // MARK: Checks

    /// Creates the container (and missing parents) with mode 0700 when `create` is true, then
    /// refuses a container that is a symlink, not a directory, not ours, or open to group/others.
    public func prepare(create: Bool, fileSystem: FileSystem) throws(StorageError) {
        if create { try prepareParents(fileSystem: fileSystem) }
        try checkPrivateDirectory(path, fileSystem: fileSystem)
    }

    /// Creates this path and its missing parents with mode 0700.
    func prepareParents(fileSystem: FileSystem) throws(StorageError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if try fileSystem.status(prefix) == nil { try fileSystem.makeDirectory(prefix) }
        }
    }

    func checkPrivateDirectory(_ directory: String, fileSystem: FileSystem) throws(StorageError) {
        guard let info = try fileSystem.status(directory) else {
            throw .system(operation: "open container", path: directory, errno: ENOENT)
        }
        if info.st_mode & S_IFMT == S_IFLNK { throw .symbolicLink(path: directory) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .wrongFileType(path: directory) }
        guard info.st_uid == geteuid() else { throw .wrongOwner(path: directory, owner: info.st_uid) }
        guard info.st_mode & 0o077 == 0 else { throw .insecurePermissions(path: directory, mode: info.st_mode) }
    }
}
