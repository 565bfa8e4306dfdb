import Glibc

/// A file's device and inode: whether a path still names the file it named before (an agent's
/// socket removed or replaced by another's).
public struct FileIdentity: Equatable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    /// The identity of what `path` names itself (a link is not followed); `nil` when nothing is there.
    public init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
