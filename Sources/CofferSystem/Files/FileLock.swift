import Glibc

/// An advisory `flock(2)` on the container's lock file: exclusive for writers, shared for
/// readers. `flock` locks belong to the open file description, so they serialise threads of one
/// process as well as separate processes (POSIX `fcntl` locks would not).
///
/// This is Coffer's `FMDatabaseQueue`: every read-modify-write of records and index happens
/// inside one exclusive lock, so concurrent writers lose no update. The lock file is opened
/// beneath the container like every other file: a link or a FIFO there is refused.
public struct FileLock: Sendable {
    public enum Mode: Sendable { case shared, exclusive }

    let directory: Directory
    let name: String
    let fileSystem: FileSystem

    public init(_ name: String, in directory: Directory, fileSystem: FileSystem) {
        self.directory = directory
        self.name = name
        self.fileSystem = fileSystem
    }

    /// Runs `body` while holding the lock, waiting for it as long as it takes.
    public func withLock<Result>(_ mode: Mode, _ body: () throws -> Result) throws -> Result {
        let fd = try fileSystem.openFile(name, in: directory, flags: O_RDWR | O_CREAT)
        defer { close(fd) }  // closing the descriptor releases the lock
        if case .failure(let failure) = SystemCall.retryingInterrupts({ flock(fd, mode == .exclusive ? LOCK_EX : LOCK_SH) }) {
            throw StorageError.system(operation: "lock", path: directory.path(of: name), errno: failure.rawValue)
        }
        return try body()
    }

    /// Runs `body` under the exclusive lock if it is free right now; returns `nil` otherwise.
    public func withLockIfAvailable<Result>(_ body: () throws -> Result) throws -> Result? {
        let fd = try fileSystem.openFile(name, in: directory, flags: O_RDWR | O_CREAT)
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK || errno == EINTR { return nil }
            throw fileSystem.error("lock", directory.path(of: name))
        }
        return try body()
    }
}
