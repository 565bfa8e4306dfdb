import CLinux
import CofferSupport
import Glibc

/// The one place that calls POSIX file APIs. Every `-1` becomes a thrown `StorageError` naming
/// the operation and path (swift-system's habit).
///
/// Inside a container, the device state and backup trees, every call names a file relative to
/// an open `Directory` and never follows a link (SPEC.md §3.4); the path-based calls at the end
/// are for files the user names on the command line (an import, a password file, a backup
/// archive), which are resolved as any tool resolves them.
///
/// Writes are atomic: a temp file in the container's `tmp/` is written, fsynced and renamed over
/// the target, and the target's directory is fsynced.
public struct FileSystem: Sendable {
    /// Counts mutating steps and fails one on request; `nil` outside tests.
    public let faults: FaultInjector?

    public init(faults: FaultInjector? = nil) {
        self.faults = faults
    }

    public static let standard = FileSystem()

    /// The directory part of `path` (`"."` when there is none, `"/"` for a file in the root);
    /// trailing slashes are ignored.
    public static func parentDirectory(of path: String) -> String {
        let trimmed = Substring(trimmingTrailingSlashes(path))
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }

    /// Whether `path` is on a file system kept in memory only (tmpfs, ramfs): where a secret in
    /// the clear may sit for a moment without reaching a disk. `false` when it cannot be told.
    public static func isMemoryBacked(_ path: String) -> Bool {
        let tmpfsMagic: Int64 = 0x0102_1994, ramfsMagic: Int64 = 0x8584_58F6  // linux/magic.h
        return [tmpfsMagic, ramfsMagic].contains(Int64(coffer_filesystem_type(path)))
    }

    /// `path` made absolute against the working directory (unchanged when it already is, or
    /// when the working directory cannot be read).
    public static func absolutePath(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/" + path
    }

    /// The last component of `path`.
    /// Creates `path`, 0600, with `bytes`: only if nothing is there, never through a link. For a
    /// moment's copy of a secret in a private directory on a tmpfs (the editor's document, a key
    /// ssh-keygen opens); `shred` removes it.
    public func createPrivateFile(_ bytes: [UInt8], at path: String) throws(StorageError) {
        guard case .success(let fd) = SystemCall.retryingInterrupts({ open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }) else {
            throw error("create", path)
        }
        defer { Descriptor.close(fd) }
        if let failure = Descriptor.writeAll(fd, bytes) { throw .system(operation: "write", path: path, errno: failure.rawValue) }
    }

    /// Overwrites the file at `path` with zeros (through its own descriptor, never a link) and
    /// unlinks it; quietly, whatever is or is not there.
    public func shred(_ path: String) {
        if case .success(let fd) = SystemCall.retryingInterrupts({ open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC) }) {
            if case .success(let status) = FileStatus.of(descriptor: fd), status.kind == .regular, status.size > 0 {
                Descriptor.writeAll(fd, [UInt8](repeating: 0, count: Int(status.size)))
                fsync(fd)
            }
            Descriptor.close(fd)
        }
        unlink(path)
    }

    /// Whether anything is at `path`, following links (`stat`): a browser's configuration
    /// directory, found by looking.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether this process may read `path` (`access(R_OK)`: a data file found by looking).
    public static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// Whether this process may write in `path` (`access(W_OK)`).
    public static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// Whether this process may run `path` (`access(X_OK)`: a program found on a search path).
    public static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// A temporary file's distinguishing part: `count` random bytes in hex (`getrandom(2)`, so two
    /// writers never pick one name; not a secret), or the process id if the kernel has none yet.
    public static func uniqueSuffix(_ count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        let filled = bytes.withUnsafeMutableBytes { buffer in SystemCall.retryingInterrupts { coffer_getrandom(buffer.baseAddress, UInt(count)) } }
        guard case .success(let filledCount) = filled, filledCount == count else { return String(getpid()) }
        return Hex.encode(bytes)
    }

    public static func lastComponent(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
    }

    // MARK: Reading

    /// Reads the regular file `name` in `directory`, refusing a link, a FIFO, a device or a
    /// directory, and anything larger than `limit` before reading. (Opened `O_NONBLOCK`, so a
    /// planted FIFO is refused instead of blocking the open until someone writes to it.)
    public func readFile(_ name: String, in directory: Directory, limit: Int) throws(StorageError) -> [UInt8] {
        try Self.checkName(name, in: directory)
        return try readAll(openBeneath(directory, name, flags: O_RDONLY | O_NONBLOCK), path: directory.path(of: name), limit: limit)
    }

    /// `lstat` of `name` in `directory` (a link is reported as a link), or `nil` when absent.
    public func status(_ name: String, in directory: Directory) throws(StorageError) -> FileStatus? {
        try Self.checkName(name, in: directory)
        var info = stat()
        if fstatat(directory.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return FileStatus(info) }
        if errno == ENOENT { return nil }
        throw error("stat", directory.path(of: name))
    }

    /// The names in `directory`, without `.` and `..`.
    public func contents(of directory: Directory) throws(StorageError) -> [String] {
        let fd = dup(directory.descriptor)
        guard fd >= 0, let stream = fdopendir(fd) else {
            if fd >= 0 { close(fd) }
            throw error("open directory", directory.path)
        }
        defer { closedir(stream) }
        rewinddir(stream)  // the duplicate shares the offset of earlier listings
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `directory` has no entries (an error counts as not empty: the caller looks).
    public func isEmpty(_ directory: Directory) -> Bool {
        coffer_directory_is_empty(directory.descriptor) == 1
    }

    /// A regular file of `directory` held open to be read in pieces (a derived file whose header
    /// says where the one piece a reader wants is), or `nil` when it does not exist.
    public func openForReading(_ name: String, in directory: Directory) throws(StorageError) -> OpenedFile? {
        try Self.checkName(name, in: directory)
        let fd: Int32
        do {
            fd = try openBeneath(directory, name, flags: O_RDONLY | O_NONBLOCK)
        } catch where error.isNotFound {
            return nil
        }
        return try OpenedFile(regularFile: fd, path: directory.path(of: name))
    }

    /// Opens a file the user named for reading parts of it (a local breach list of many
    /// gigabytes, searched by bisection); it must be a regular file.
    public func openUserFileForReading(_ path: String) throws(StorageError) -> OpenedFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw error("open", path) }
        return try OpenedFile(regularFile: fd, path: path)
    }

    /// Reads all of the regular file open as `fd`, then closes it. `path` only names it in errors.
    private func readAll(_ fd: Int32, path: @autoclosure () -> String, limit: Int) throws(StorageError) -> [UInt8] {
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("stat", path()) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .wrongFileType(path: path()) }
        guard info.st_size <= limit else { throw .fileTooLarge(path: path(), size: Int64(info.st_size), limit: limit) }
        // Not zeroed first: a full identity bucket is tens of kilobytes a fill would clear for nothing.
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(info.st_size)) { buffer, initialized in
            // A file that shrank under us: what is there is returned, and decoding judges it.
            switch Descriptor.readUntilFullOrEnd(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
            case .success(let count): initialized = count
            case .failure(let error): failure = error.rawValue; initialized = 0
            }
        }
        if failure != 0 {
            errno = failure
            throw error("read", path())
        }
        return bytes
    }

    // MARK: Writing

    /// Makes the directory `name` in `parent` (0700); an existing directory is fine, anything
    /// else of that name (a link, a file) is refused.
    public func makeDirectory(_ name: String, in parent: Directory) throws(StorageError) {
        _ = try directory(name, in: parent, create: true)
    }

    /// Makes `name` in `parent`, private (0700), failing if anything is there already: a
    /// directory this call alone fills (a staging copy, a restore's target).
    public func makeNewDirectory(_ name: String, in parent: Directory) throws(StorageError) {
        try Self.checkName(name, in: parent)
        guard SystemCall.retryingInterrupts({ mkdirat(parent.descriptor, name, 0o700) }).isSuccess else {
            throw error("create directory", parent.path(of: name))
        }
    }

    /// Atomically replaces `name` in `directory` with `bytes` (mode 0600) via a temp file in
    /// `temporary`, which must be on the same file system. A link where the file was is
    /// replaced, never written through.
    /// - Parameter durable: `false` skips both fsyncs, for bulk writes that end with one
    ///   `syncFileSystems` before anything depends on them.
    public func writeAtomically(
        _ bytes: [UInt8], to name: String, in directory: Directory, via temporary: Directory, durable: Bool = true
    ) throws(StorageError) {
        try Self.checkName(name, in: directory)
        let temporaryName = Self.uniqueSuffix(8) + ".tmp"
        try createFile(bytes, named: temporaryName, in: temporary, fsyncFile: durable)
        do throws(StorageError) {
            try faults?.step()
            guard renameat(temporary.descriptor, temporaryName, directory.descriptor, name) == 0 else {
                throw error("rename", directory.path(of: name))
            }
        } catch let failure {
            unlinkat(temporary.descriptor, temporaryName, 0)
            throw failure
        }
        if durable { try sync(directory) }
    }

    /// Overwrites `name` (mode 0600, created if missing) in place, without a temp file or rename:
    /// for device state whose tearing by a crash costs nothing but an ordering. Replacing a file
    /// by rename makes ext4 flush the new data first (`auto_da_alloc`), ~2 ms on every fill.
    public func overwriteInPlace(_ bytes: [UInt8], at name: String, in directory: Directory) throws(StorageError) {
        try Self.checkName(name, in: directory)
        let fd = try openBeneath(directory, name, flags: O_WRONLY | O_CREAT | O_NONBLOCK, mode: 0o600)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("stat", directory.path(of: name)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .wrongFileType(path: directory.path(of: name)) }
        try faults?.step()
        try writeAll(bytes, to: fd, path: directory.path(of: name))
        guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw error("truncate", directory.path(of: name)) }
    }

    /// Creates `name` (mode 0600) with `bytes`, failing if anything of that name exists: for
    /// files that nothing refers to until a later commit (SPEC.md §3.4), where a torn file after
    /// a crash is garbage that recovery removes, so the temp file and rename buy nothing.
    /// - Parameter durable: `false` skips the fsyncs, for bulk writes that end with one
    ///   `syncFileSystems` before anything refers to them.
    public func writeNewFile(_ bytes: [UInt8], to name: String, in directory: Directory, durable: Bool) throws(StorageError) {
        try Self.checkName(name, in: directory)
        try createFile(bytes, named: name, in: directory, fsyncFile: durable)
        if durable { try sync(directory) }
    }

    /// Creates `name` (`O_EXCL`, mode 0600) holding `bytes`, fsynced if asked; a failed write
    /// removes it again. The common first half of `writeAtomically` and `writeNewFile`.
    private func createFile(_ bytes: [UInt8], named name: String, in directory: Directory, fsyncFile: Bool) throws(StorageError) {
        let fd = try openBeneath(directory, name, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        do throws(StorageError) {
            try faults?.step()
            try writeAll(bytes, to: fd, path: directory.path(of: name))
            guard !fsyncFile || fsync(fd) == 0 else { throw error("fsync", directory.path(of: name)) }
        } catch let failure {
            close(fd)
            unlinkat(directory.descriptor, name, 0)
            throw failure
        }
        close(fd)
    }

    /// Renames `name` in `source` to `newName` in `destination` (the entry itself, never what a
    /// link points to) and makes it durable.
    public func rename(_ name: String, in source: Directory, to newName: String, in destination: Directory) throws(StorageError) {
        try Self.checkName(name, in: source)
        try Self.checkName(newName, in: destination)
        try faults?.step()
        guard renameat(source.descriptor, name, destination.descriptor, newName) == 0 else { throw error("rename", source.path(of: name)) }
        try sync(destination)
        if source !== destination { try sync(source) }
    }

    /// Removes the entry `name` (a file, or a link itself, never its target) and makes the
    /// removal durable. A missing entry is not an error.
    public func removeFile(_ name: String, in directory: Directory) throws(StorageError) {
        try Self.checkName(name, in: directory)
        try faults?.step()
        if unlinkat(directory.descriptor, name, 0) != 0 {
            if errno == ENOENT { return }
            throw error("remove", directory.path(of: name))
        }
        try sync(directory)
    }

    /// Removes the entry `name` without fsync; for stale temp files and replaced shards.
    public func removeQuietly(_ name: String, in directory: Directory) {
        guard (try? Self.checkName(name, in: directory)) != nil else { return }
        if unlinkat(directory.descriptor, name, 0) == 0 { faults?.note(.unlinked(directory.path(of: name))) }
    }

    /// Removes the entry `name` beneath `directory` — a file, or a directory with everything in
    /// it (entries, never link targets): for a replaced container after a restore, a clone that
    /// failed. Best effort.
    public func removeTree(_ name: String, in directory: Directory) {
        guard unlinkat(directory.descriptor, name, 0) != 0, errno == EISDIR else { return }
        if let child = try? self.directory(name, in: directory, check: .anyOwner) {
            for entry in (try? contents(of: child)) ?? [] { removeTree(entry, in: child) }
        }
        unlinkat(directory.descriptor, name, AT_REMOVEDIR)
    }

    /// fsyncs `directory`, so a rename or unlink in it survives power loss.
    public func sync(_ directory: Directory) throws(StorageError) {
        guard fsync(directory.descriptor) == 0 else { throw error("fsync", directory.path) }
        faults?.note(.synced(directory.path))
    }

    /// Flushes every pending write of the file systems holding `directories` (`syncfs(2)`, once
    /// per file system): one flush for a bulk import instead of two fsyncs per file.
    public func syncFileSystems(of directories: [Directory]) throws(StorageError) {
        var synced: [UInt64] = []
        for directory in directories {
            var info = stat()
            guard fstat(directory.descriptor, &info) == 0 else { throw error("stat", directory.path) }
            guard !synced.contains(UInt64(info.st_dev)) else { continue }
            guard coffer_syncfs(directory.descriptor) == 0 else { throw error("syncfs", directory.path) }
            synced.append(UInt64(info.st_dev))
        }
    }

    // MARK: Descriptors

    /// Opens `name` in `directory` for `FileLock` and the like, never through a link.
    func openFile(_ name: String, in directory: Directory, flags: Int32) throws(StorageError) -> Int32 {
        try Self.checkName(name, in: directory)
        let fd = try openBeneath(directory, name, flags: flags | O_NONBLOCK, mode: 0o600)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .wrongFileType(path: directory.path(of: name))
        }
        return fd
    }

    private func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(StorageError) {
        if let failure = Descriptor.writeAll(fd, bytes) { throw .system(operation: "write", path: path, errno: failure.rawValue) }
    }

    package func error(_ operation: String, _ path: String) -> StorageError {
        .system(operation: operation, path: path, errno: errno)
    }

    // MARK: Files the user names

    /// Reads a file the user named (an export to import, a password file, a backup archive),
    /// following links as any tool does; still only a regular file, at most `limit` bytes.
    public func readUserFile(_ path: String, limit: Int) throws(StorageError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path) }
        return try readAll(fd, path: path, limit: limit)
    }

    /// `lstat` of a path the user named, or `nil` when it does not exist.
    public func userPathStatus(_ path: String) throws(StorageError) -> FileStatus? {
        var info = stat()
        if lstat(path, &info) == 0 { return FileStatus(info) }
        if errno == ENOENT { return nil }
        throw error("stat", path)
    }

    /// Writes a new file the user named (a backup archive, `inject -o`), atomically: a 0600 temp
    /// file beside it, then a rename that refuses to replace anything (`RENAME_NOREPLACE`) —
    /// unless `replacing`, when the rename takes the old file's place in one step.
    public func writeUserFileExclusively(_ bytes: [UInt8], to path: String, replacing: Bool = false) throws(StorageError) {
        let parent = try openDirectory(atPath: Self.parentDirectory(of: path), check: .anyOwner)
        let name = Self.lastComponent(of: path)
        let temporaryName = "." + name + "." + Self.uniqueSuffix(6) + ".tmp"
        try createFile(bytes, named: temporaryName, in: parent, fsyncFile: true)
        let renamed = replacing
            ? renameat(parent.descriptor, temporaryName, parent.descriptor, name)
            : coffer_renameat_noreplace(parent.descriptor, temporaryName, parent.descriptor, name)
        guard renamed == 0 else {
            let failure = error("create", path)
            unlinkat(parent.descriptor, temporaryName, 0)
            throw failure
        }
        try sync(parent)
    }

    /// Replaces a file the user's configuration names (a browser's host manifest), atomically,
    /// with `mode`; missing parent directories are made (0755: browsers and their sandboxes read
    /// them). Not for secrets: these files are public by design.
    public func replaceUserFile(_ bytes: [UInt8], at path: String, mode: mode_t) throws(StorageError) {
        let parentPath = Self.parentDirectory(of: path)
        var prefix = parentPath.hasPrefix("/") ? "" : "."
        for component in parentPath.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST { throw error("create directory", prefix) }
        }
        let parent = try openDirectory(atPath: parentPath, check: .anyOwner)
        let name = Self.lastComponent(of: path)
        let temporaryName = "." + name + "." + Self.uniqueSuffix(6) + ".tmp"
        try createFile(bytes, named: temporaryName, in: parent, fsyncFile: true)
        guard fchmodat(parent.descriptor, temporaryName, mode, 0) == 0,
              renameat(parent.descriptor, temporaryName, parent.descriptor, name) == 0
        else {
            let failure = error("write", path)
            unlinkat(parent.descriptor, temporaryName, 0)
            throw failure
        }
        try sync(parent)
    }

    /// Makes a directory of the user's private (0700): git leaves `.git` 0755 whatever
    /// `--shared` says.
    public func restrictToUser(_ path: String) throws(StorageError) {
        if chmod(path, 0o700) != 0 { throw error("chmod", path) }
    }

    /// Removes `path` if it is an empty directory; anything else is left as it is.
    public func removeEmptyDirectory(_ path: String) {
        rmdir(path)
    }

    /// Removes a file the user's configuration names; a missing one is fine.
    public func removeUserFile(_ path: String) throws(StorageError) {
        if unlink(path) != 0, errno != ENOENT { throw error("remove", path) }
    }

    /// A new, empty directory only this user can enter, under `$TMPDIR` (or `/tmp`), named
    /// unpredictably (`mkdtemp`), so no other user can plant a link where it will be.
    /// - Parameter base: where to make it instead of `$TMPDIR`.
    public func makeTemporaryDirectory(prefix: String, in base: String? = nil) throws(StorageError) -> String {
        let base = base ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw error("create temporary directory", base) }
        return String(cString: created)
    }
}

/// A regular file open for reading at offsets; closed when released.
public final class OpenedFile {
    private let fd: Int32
    /// Its size when it was opened.
    public let size: Int
    /// The path it was opened by, for messages.
    let path: String
    var descriptor: Int32 { fd }

    /// Takes `fd`, which must be a regular file's (closed and refused otherwise).
    init(regularFile fd: Int32, path: String) throws(StorageError) {
        guard case .success(let status) = FileStatus.of(descriptor: fd), status.kind == .regular else {
            close(fd)
            throw .wrongFileType(path: path)
        }
        self.fd = fd
        self.size = Int(status.size)
        self.path = path
    }

    deinit { close(fd) }

    /// `count` bytes at `offset`, or `nil` when the file holds fewer there.
    public func read(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= size - count else { return nil }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let read = Descriptor.readUntilFullOrEnd(fd, into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            initialized = (try? read.get()) ?? 0
            failed = initialized < count
        }
        return failed ? nil : bytes
    }

    /// At most `count` bytes at `offset`: fewer at the end of the file, none past it or on a
    /// failure.
    public func read(upTo count: Int, at offset: Int) -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = (try? Descriptor.readUntilFullOrEnd(fd, into: UnsafeMutableRawBufferPointer(buffer), at: offset).get()) ?? 0
        }
    }
}
