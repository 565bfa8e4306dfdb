import CLinux
import Glibc

/// A directory held open as a descriptor. Every file Coffer reads, writes, renames or removes
/// inside a container (and inside the device state and backup trees) is named relative to one
/// of these, so nothing is ever resolved through a symbolic link (SPEC.md §3.4): a directory is
/// reached from its parent with `O_DIRECTORY | O_NOFOLLOW` and checked to be ours and private
/// (§3.5), and a file is opened beneath it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
/// (or `O_NOFOLLOW` on kernels without it; names are single components, checked).
///
/// Closed when the last reference goes.
public final class Directory: Sendable, CustomStringConvertible {
    /// The path it was reached by, for messages only: nothing is ever opened through it again.
    public let path: String
    package let descriptor: Int32

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public var description: String { path }

    /// The display path of `name` in this directory.
    public func path(of name: String) -> String { path == "/" ? "/" + name : path + "/" + name }
}

/// Which checks a directory passes when it is opened (SPEC.md §3.5).
public enum DirectoryCheck: Sendable {
    /// Owned by the effective user, no group or other permission: every directory of a
    /// container and of the device state.
    case privateToUser
    /// Only that it is a directory reached without a link: a backup's tree, whose modes a copy
    /// tool may have changed (the files are sealed either way).
    case anyOwner
}

extension FileSystem {
    // MARK: Opening directories

    /// Opens (and with `create`, first makes, 0700) the directory at `path`. The components
    /// leading to it are the user's own layout and are resolved as usual; the directory itself
    /// MUST NOT be a link. With `createParents`, missing parents are made 0700 too.
    public func openDirectory(
        atPath path: String, create: Bool = false, createParents: Bool = false, check: DirectoryCheck = .privateToUser
    ) throws(StorageError) -> Directory {
        let trimmed = Self.trimmingTrailingSlashes(path)
        if createParents { try makeParents(of: trimmed) }
        if create, mkdir(trimmed, 0o700) != 0, errno != EEXIST { throw error("create directory", trimmed) }
        let fd = open(trimmed, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure(opening: trimmed, errno: errno) }
        let directory = Directory(path: trimmed, descriptor: fd)
        try verify(directory, check)
        return directory
    }

    /// Opens the directory `name` in `parent`, never through a link, making it (0700) first when
    /// `create` is set.
    /// - Parameter durable: fsync `parent` when the directory is made, so its name survives a
    ///   power loss before anything in it is relied on (POSIX makes no promise without it;
    ///   ext4 happens to keep it). `false` for bulk writes that end with one `syncFileSystems`.
    public func directory(
        _ name: String, in parent: Directory, create: Bool = false, durable: Bool = true, check: DirectoryCheck = .privateToUser
    ) throws(StorageError) -> Directory {
        try Self.checkName(name, in: parent)
        if create {
            try faults?.step()
            if mkdirat(parent.descriptor, name, 0o700) == 0 {
                faults?.note(.made(parent.path(of: name)))
                if durable { try sync(parent) }
            } else if errno != EEXIST {
                throw error("create directory", parent.path(of: name))
            }
        }
        let fd = try openBeneath(parent, name, flags: O_RDONLY | O_DIRECTORY)
        let directory = Directory(path: parent.path(of: name), descriptor: fd)
        try verify(directory, check)
        return directory
    }

    /// `directory(_:in:)`, or `nil` when there is no such entry (any other problem throws).
    public func directoryIfPresent(
        _ name: String, in parent: Directory, check: DirectoryCheck = .privateToUser
    ) throws(StorageError) -> Directory? {
        do {
            return try directory(name, in: parent, check: check)
        } catch where error.isNotFound {
            return nil
        }
    }

    /// The directory's own type, owner and mode against `check`.
    private func verify(_ directory: Directory, _ check: DirectoryCheck) throws(StorageError) {
        var info = stat()
        guard fstat(directory.descriptor, &info) == 0 else { throw error("stat", directory.path) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .wrongFileType(path: directory.path) }
        guard case .privateToUser = check else { return }
        guard info.st_uid == Self.effectiveUser else { throw .wrongOwner(path: directory.path, owner: info.st_uid) }
        guard info.st_mode & 0o077 == 0 else { throw .insecurePermissions(path: directory.path, mode: info.st_mode) }
    }

    /// This process's effective user, asked once (a system call per directory otherwise).
    static let effectiveUser = geteuid()

    // MARK: Resolution (SPEC.md §3.4)

    /// Opens `relative` (one or more components) beneath `directory` without following any
    /// link: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, else a walk of `O_NOFOLLOW`
    /// opens. `O_NOFOLLOW | O_CLOEXEC` are always added.
    func openBeneath(_ directory: Directory, _ relative: String, flags: Int32, mode: mode_t = 0) throws(StorageError) -> Int32 {
        let all = flags | O_NOFOLLOW | O_CLOEXEC
        if !relative.utf8.contains(UInt8(ascii: "/")), relative != "..", relative != ".", !relative.isEmpty {
            // One component: `O_NOFOLLOW` is the whole rule, in one call.
            let fd = openat(directory.descriptor, relative, all, mode)
            guard fd >= 0 else { throw failure(opening: directory.path(of: relative), errno: errno) }
            return fd
        }
        let display = directory.path(of: relative)
        let fd = coffer_openat2_beneath(directory.descriptor, relative, UInt64(UInt32(bitPattern: all)), flags & O_CREAT != 0 ? UInt64(mode) : UInt64(0))
        if fd >= 0 { return fd }
        let code = errno
        guard code == ENOSYS || code == EPERM && Self.openat2Filtered else { throw failure(opening: display, errno: code) }
        // A kernel (or seccomp filter) without openat2: one component at a time.
        let components = relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !components.isEmpty, components.allSatisfy({ $0 != ".." && $0 != "." }) else { throw .unsafeName(path: display) }
        var current = dup(directory.descriptor)
        guard current >= 0 else { throw error("open", directory.path) }
        for (index, component) in components.enumerated() {
            let last = index == components.count - 1
            let next = openat(current, component, last ? all : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, mode)
            let code = errno
            close(current)
            guard next >= 0 else { throw failure(opening: display, errno: code) }
            current = next
        }
        return current
    }

    /// Whether `openat2` answered EPERM because a sandbox filters it (some container runtimes
    /// do); then the walk is used. Decided once per process by a harmless call.
    private static let openat2Filtered: Bool = {
        let fd = coffer_openat2_beneath(AT_FDCWD, ".", UInt64(UInt32(bitPattern: O_RDONLY | O_DIRECTORY | O_CLOEXEC)), 0)
        if fd >= 0 { close(fd) }
        return fd < 0 && errno == EPERM
    }()

    /// A name Coffer puts in a directory: one component, not `.` or `..`, no NUL.
    static func checkName(_ name: String, in directory: Directory) throws(StorageError) {
        // One pass over the bytes: this runs for every file a command opens.
        guard !name.isEmpty, name != ".", name != "..", !name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 }) else {
            throw .unsafeName(path: directory.path(of: name))
        }
    }

    /// What a failed open of `path` means: a link or a wrong type is named as such. (Opening a
    /// link with `O_DIRECTORY | O_NOFOLLOW` answers ENOTDIR, so that case looks again.)
    func failure(opening path: String, errno code: Int32) -> StorageError {
        switch code {
        case ELOOP, EXDEV: return .symbolicLink(path: path)  // EXDEV: openat2 refused to leave the directory
        case EISDIR, ENXIO: return .wrongFileType(path: path)  // a directory opened for writing; a FIFO without a reader
        case ENOTDIR:
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK { return .symbolicLink(path: path) }
            return .wrongFileType(path: path)
        default: return .system(operation: "open", path: path, errno: code)
        }
    }

    static func trimmingTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    /// Makes the missing parents of `path` (0700), following the links the user's own layout
    /// may have above it.
    private func makeParents(of path: String) throws(StorageError) {
        let parent = Self.parentDirectory(of: path)
        guard parent != "/", parent != "." else { return }
        var prefix = parent.hasPrefix("/") ? "" : "."
        for component in parent.split(separator: "/") {
            prefix += "/" + component
            var info = stat()
            if stat(prefix, &info) != 0 {
                guard errno == ENOENT else { throw error("stat", prefix) }
                if mkdir(prefix, 0o700) != 0, errno != EEXIST { throw error("create directory", prefix) }
            }
        }
    }
}
