import CLinux
import Glibc

/// The one place that calls POSIX file APIs. Every `-1` becomes a thrown `StorageError` naming
/// the operation and path (swift-system's habit).
///
/// Writes are atomic: a temp file in the container's `tmp/` is written, fsynced and renamed over
/// the target, and the target's directory is fsynced (SPEC.md §2.4). Nothing follows symbolic links.
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
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let parent = trimmed[..<slash]
        return parent.isEmpty ? "/" : String(parent)
    }

    // MARK: Reading

    /// Reads a whole regular file, refusing symlinks and anything larger than `limit` before reading.
    public func readFile(_ path: String, limit: Int) throws(StorageError) -> [UInt8] {
        try readAll(openDescriptor(path, flags: O_RDONLY | O_NONBLOCK), path: path, limit: limit)
    }

    /// `readFile` of the file `name` in an open directory: many reads in one directory (a full
    /// listing opens 256 index shards) resolve the directory's path once, through `openat`.
    public func readFile(named name: String, in directory: OpenDirectory, limit: Int) throws(StorageError) -> [UInt8] {
        let fd = openat(directory.descriptor, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP { throw .symbolicLink(path: directory.path + "/" + name) }
            throw error("open", directory.path + "/" + name)
        }
        return try readAll(fd, path: directory.path + "/" + name, limit: limit)
    }

    /// Holds `path` open for `readFile(named:in:limit:)`.
    public func openDirectory(_ path: String) throws(StorageError) -> OpenDirectory {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw error("open directory", path) }
        return OpenDirectory(path: path, descriptor: fd)
    }

    /// Reads all of the regular file open as `fd`, then closes it. `path` only names it in errors.
    /// (Files are opened `O_NONBLOCK`, so a FIFO planted in the container is refused here
    /// instead of blocking the open until someone writes to it.)
    private func readAll(_ fd: Int32, path: @autoclosure () -> String, limit: Int) throws(StorageError) -> [UInt8] {
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw error("stat", path()) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .wrongFileType(path: path()) }
        guard info.st_size <= limit else { throw .fileTooLarge(path: path(), size: Int64(info.st_size), limit: limit) }
        // Not zeroed first: a full identity bucket is tens of kilobytes a fill would clear for nothing.
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(info.st_size)) { buffer, initialized in
            var offset = 0
            while offset < buffer.count {
                let count = read(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = errno; break }
                if count == 0 { break }  // shrank under us: return what is there, decoding will judge it
                offset += count
            }
            initialized = offset
        }
        if failure != 0 {
            errno = failure
            throw error("read", path())
        }
        return bytes
    }

    /// `lstat` of `path`, or `nil` when it does not exist.
    public func status(_ path: String) throws(StorageError) -> stat? {
        var info = stat()
        if lstat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw error("stat", path)
    }

    /// The names in a directory, without `.` and `..`; empty when it does not exist.
    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            throw error("open directory", path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    // MARK: Writing

    /// A new, empty directory only this user can enter, under `$TMPDIR` (or `/tmp`), named
    /// unpredictably (`mkdtemp`), so no other user can plant a link where it will be.
    public func makeTemporaryDirectory(prefix: String) throws(StorageError) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw error("create temporary directory", base) }
        return String(cString: created)
    }

    /// Creates a directory with mode 0700 (no error if it exists).
    public func makeDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw error("create directory", path) }
    }

    /// Atomically replaces `path` with `bytes` (mode 0600) via a temp file in `temporaryDirectory`,
    /// which must be on the same file system.
    /// - Parameter durable: `false` skips both fsyncs, for bulk writes that end with one
    ///   `syncFileSystem` before anything depends on them.
    public func writeAtomically(
        _ bytes: [UInt8], to path: String, temporaryDirectory: String, durable: Bool = true
    ) throws(StorageError) {
        let name = (try? SecureRandom.bytes(8)).map { Hex.encode($0) } ?? String(getpid())
        let temporary = temporaryDirectory + "/" + name + ".tmp"
        try createFile(bytes, at: temporary, fsyncFile: durable)
        do throws(StorageError) {
            try faults?.step()
            guard Glibc.rename(temporary, path) == 0 else { throw error("rename", path) }
        } catch let failure {
            unlink(temporary)
            throw failure
        }
        if durable { try syncDirectory(containing: path) }
    }

    /// Overwrites `path` (mode 0600, created if missing) in place, without a temp file or rename:
    /// for device state whose tearing by a crash costs nothing but an ordering. Replacing a file
    /// by rename makes ext4 flush the new data first (`auto_da_alloc`), ~2 ms on every fill.
    public func overwriteInPlace(_ bytes: [UInt8], at path: String) throws(StorageError) {
        let fd = try openDescriptor(path, flags: O_WRONLY | O_CREAT)
        defer { close(fd) }
        try faults?.step()
        try writeAll(bytes, to: fd, path: path)
        guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw error("truncate", path) }
    }

    /// Creates `path` (mode 0600) with `bytes`, failing if it exists: for files that nothing
    /// refers to until a later commit (SPEC.md §2.4), where a torn file after a crash is
    /// garbage that recovery removes, so the temp file and rename of `writeAtomically` buy nothing.
    /// - Parameter durable: `false` skips the fsyncs, for bulk writes that end with one
    ///   `syncFileSystem` before anything refers to them.
    public func writeNewFile(_ bytes: [UInt8], to path: String, durable: Bool) throws(StorageError) {
        try createFile(bytes, at: path, fsyncFile: durable)
        if durable { try syncDirectory(containing: path) }
    }

    /// Creates `path` (`O_EXCL`, mode 0600) holding `bytes`, fsynced if asked; a failed write
    /// removes it again. The common first half of `writeAtomically` and `writeNewFile`.
    private func createFile(_ bytes: [UInt8], at path: String, fsyncFile: Bool) throws(StorageError) {
        let fd = try openDescriptor(path, flags: O_WRONLY | O_CREAT | O_EXCL)
        do throws(StorageError) {
            try faults?.step()
            try writeAll(bytes, to: fd, path: path)
            guard !fsyncFile || fsync(fd) == 0 else { throw error("fsync", path) }
        } catch let failure {
            close(fd)
            unlink(path)
            throw failure
        }
        close(fd)
    }

    /// Flushes every pending write of the file system holding `path` (`syncfs(2)`): one flush
    /// for a bulk import instead of two fsyncs per file.
    public func syncFileSystem(containing path: String) throws(StorageError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open directory", path) }
        defer { close(fd) }
        guard coffer_syncfs(fd) == 0 else { throw error("syncfs", path) }
    }

    /// `syncFileSystem` once for each file system the directories are on (normally one: a
    /// container is one directory tree, but a mount point inside it must not be missed).
    public func syncFileSystems(containing paths: [String]) throws(StorageError) {
        var synced: [UInt64] = []
        for path in paths {
            guard let device = try status(path)?.st_dev else { throw error("stat", path) }
            guard !synced.contains(UInt64(device)) else { continue }
            try syncFileSystem(containing: path)
            synced.append(UInt64(device))
        }
    }

    /// Renames a file or directory and makes it durable.
    public func rename(_ source: String, to destination: String) throws(StorageError) {
        try faults?.step()
        guard Glibc.rename(source, destination) == 0 else { throw error("rename", source) }
        try syncDirectory(containing: destination)
    }

    /// Removes a file and makes the removal durable. Missing files are not an error.
    public func removeFile(_ path: String) throws(StorageError) {
        try faults?.step()
        if unlink(path) != 0 {
            if errno == ENOENT { return }
            throw error("remove", path)
        }
        try syncDirectory(containing: path)
    }

    /// Removes a file without fsync; for stale temp files.
    public func removeQuietly(_ path: String) {
        unlink(path)
    }

    /// fsyncs the directory that holds `path`, so a rename or unlink survives power loss.
    public func syncDirectory(containing path: String) throws(StorageError) {
        let directory = Self.parentDirectory(of: path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw error("fsync", directory) }
    }

    // MARK: Descriptors

    /// Opens with `O_NOFOLLOW | O_CLOEXEC`; a symlink is reported as such, not as ELOOP.
    func openDescriptor(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(StorageError) -> Int32 {
        let fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            if errno == ELOOP { throw .symbolicLink(path: path) }
            throw error(flags & O_CREAT != 0 ? "create" : "open", path)
        }
        return fd
    }

    private func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw error("write", path) }
            offset += count
        }
    }

    func error(_ operation: String, _ path: String) -> StorageError {
        .system(operation: operation, path: path, errno: errno)
    }
}

/// A directory held open by `FileSystem.openDirectory`; closed when the last reference goes.
public final class OpenDirectory: Sendable {
    public let path: String
    let descriptor: Int32

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}
