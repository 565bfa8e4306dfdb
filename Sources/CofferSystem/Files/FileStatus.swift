import Glibc

/// What `stat(2)` tells about a file, as a Swift value: the layers above ask "is it a
/// directory?", "how large?", "whose?" without the C structure and its mode bits.
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case regular, directory, symbolicLink, socket, fifo, device, other }

    public let kind: Kind
    /// The permission bits (`mode & 0o7777`).
    public let permissions: UInt32
    public let owner: UInt32
    public let size: Int64
    /// The device and inode: the same pair is the same file.
    public let device: UInt64
    public let inode: UInt64
    /// When the content last changed (`st_mtim`) and when the inode did (`st_ctim`, which no
    /// call can set back), in nanoseconds since the epoch: a directory's change when an entry
    /// is added, removed or replaced.
    public let modified: Int64
    public let changed: Int64

    package init(_ info: stat) {
        kind = switch info.st_mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        case S_IFSOCK: .socket
        case S_IFIFO: .fifo
        case S_IFCHR, S_IFBLK: .device
        default: .other
        }
        permissions = info.st_mode & 0o7777
        owner = info.st_uid
        size = Int64(info.st_size)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

    /// The status of an open descriptor (`fstat`).
    public static func of(descriptor fd: Int32) -> Result<FileStatus, Errno> {
        var info = stat()
        return SystemCall.retryingInterrupts { fstat(fd, &info) }.map { _ in FileStatus(info) }
    }
}

extension FileStatus.Kind: CustomStringConvertible {
    /// The kind in a message: "is a FIFO where a regular file belongs".
    public var description: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .device: "a device node"
        case .other: "an unknown kind of file"
        }
    }
}
