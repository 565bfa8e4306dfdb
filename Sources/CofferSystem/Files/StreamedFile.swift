import CLinux
import Glibc

/// A new file written piece by piece (an attachment sealed chunk by chunk, `attachment get -o`):
/// created `O_EXCL` 0600, removed again unless `finish` was reached — so a failure or a full
/// disk mid-write leaves nothing half-written where it was meant to go.
public final class StreamedFile {
    private let fd: Int32
    private let directory: Directory
    /// Its name in `directory` (a temp name, until the caller renames it).
    public private(set) var name: String
    private var finished = false
    /// Bytes written so far.
    public private(set) var written: UInt64 = 0
    private let fileSystem: FileSystem

    init(fd: Int32, name: String, in directory: Directory, fileSystem: FileSystem) {
        self.fd = fd
        self.name = name
        self.directory = directory
        self.fileSystem = fileSystem
    }

    deinit {
        Descriptor.close(fd)
        if !finished { unlinkat(directory.descriptor, name, 0) }
    }

    /// Holds an exclusive `flock` on it while it is open: another process that can take the
    /// lock (`FileLock.withLockIfAvailable`) knows its writer is gone.
    public func lock() throws(StorageError) {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw fileSystem.error("lock", directory.path(of: name)) }
    }

    /// Renames it within its directory (under the caller's lock), keeping it open.
    public func rename(to newName: String) throws(StorageError) {
        try FileSystem.checkName(newName, in: directory)
        guard renameat(directory.descriptor, name, directory.descriptor, newName) == 0 else {
            throw fileSystem.error("rename", directory.path(of: name))
        }
        name = newName
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
        try fileSystem.faults?.step()
        if let failure = Descriptor.writeAll(fd, bytes) {
            errno = failure.rawValue
            throw fileSystem.error("write", directory.path(of: name))
        }
        written += UInt64(bytes.count)
    }

    /// Makes the content durable (when asked) and keeps the file: the caller renames it next.
    public func finish(durable: Bool = true) throws(StorageError) {
        guard !durable || fsync(fd) == 0 else { throw fileSystem.error("fsync", directory.path(of: name)) }
        finished = true
    }
}

extension FileSystem {
    /// A new temp file in `directory` to write in pieces (`StreamedFile`).
    public func createStreamedFile(in directory: Directory, named name: String = FileSystem.uniqueSuffix(8) + ".tmp") throws(StorageError) -> StreamedFile {
        try Self.checkName(name, in: directory)
        let fd = try openBeneath(directory, name, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        return StreamedFile(fd: fd, name: name, in: directory, fileSystem: self)
    }

    /// Writes a new file the user named in pieces, as `writeUserFileExclusively` writes it whole:
    /// a 0600 temp file beside it, renamed into place only once `body` returned — refusing to
    /// replace anything unless `replacing`, and never writing through a link.
    public func writeUserFileStreaming(to path: String, replacing: Bool, _ body: (StreamedFile) throws -> Void) throws {
        let parent = try openDirectory(atPath: Self.parentDirectory(of: path), check: .anyOwner)
        let name = Self.lastComponent(of: path)
        let file = try createStreamedFile(in: parent)
        try body(file)
        try file.finish()
        let renamed = replacing
            ? renameat(parent.descriptor, file.name, parent.descriptor, name)
            : coffer_renameat_noreplace(parent.descriptor, file.name, parent.descriptor, name)
        guard renamed == 0 else {
            let failure = error("create", path)
            unlinkat(parent.descriptor, file.name, 0)
            throw failure
        }
        try sync(parent)
    }

    /// Opens a file the user named to be read whole in pieces (`coffer attach FILE`): only a
    /// regular file, and never through a link at its last component — a link, a FIFO (whose
    /// open would wait for a writer), a directory or a device is refused.
    public func openUserFileNoLink(_ path: String) throws(StorageError) -> OpenedFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ELOOP { throw .symbolicLink(path: path) }
            throw error("open", path)
        }
        return try OpenedFile(regularFile: fd, path: path)
    }
}

extension OpenedFile {
    /// Reads into `buffer` at `offset`: the count read (fewer only at the end of the file).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(StorageError) -> Int {
        switch Descriptor.readUntilFullOrEnd(descriptor, into: buffer, at: offset) {
        case .success(let count): return count
        case .failure(let failure): throw .system(operation: "read", path: path, errno: failure.rawValue)
        }
    }
}
