import Glibc

/// Failures of the file layer. Messages name the file, never its contents.
public enum StorageError: Error, Equatable, Sendable {
    /// A system call failed; `errno` is kept for callers that branch on it (ENOENT, ENOSPC …).
    case system(operation: String, path: String, errno: Int32)
    /// The path is a symbolic link where Coffer requires a real file or directory.
    case symbolicLink(path: String)
    /// Not the kind of file expected (a directory where a file belongs, a FIFO, …).
    case wrongFileType(path: String)
    /// The container or a file in it is readable or writable by group or others.
    case insecurePermissions(path: String, mode: UInt32)
    /// The container belongs to another user.
    case wrongOwner(path: String, owner: UInt32)
    /// Larger than any valid file of its kind; refused without reading it.
    case fileTooLarge(path: String, size: Int64, limit: Int)
    /// A group identifier that is not a safe reverse-DNS name.
    case invalidGroupIdentifier(String)
    /// A name that is not one plain component (`..`, `/`, NUL): refused before any call.
    case unsafeName(path: String)
    /// A test asked the file layer to fail here (see `FaultInjector`).
    case injectedFault(step: Int)

    public var isNotFound: Bool {
        if case .system(_, _, let code) = self { return code == ENOENT }
        return false
    }

    /// A name that was to be new is taken (`EEXIST`).
    public var isAlreadyExisting: Bool {
        if case .system(_, _, let code) = self { return code == EEXIST }
        return false
    }

    /// Something planted or misshapen in the container: a link, a wrong file type, an
    /// oversized file (SPEC.md §3.4: exit 65, like any rejected file).
    public var isRejectedFile: Bool {
        switch self {
        case .symbolicLink, .wrongFileType, .fileTooLarge, .unsafeName: true
        default: false
        }
    }

    /// The container or a directory in it is not private to this user (SPEC.md §3.5: exit 78).
    public var isUnsafeOwnership: Bool {
        switch self {
        case .insecurePermissions, .wrongOwner: true
        default: false
        }
    }
}

extension StorageError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .system(let operation, let path, let code):
            "\(operation) \(path): \(String(cString: strerror(code)))"
        case .symbolicLink(let path): "\(path) is a symbolic link (or passes through one); Coffer never follows links in a container"
        case .wrongFileType(let path): "\(path) is not what belongs there (a FIFO, a device, a directory for a file or a file for a directory)"
        case .unsafeName(let path): "\(path) is not a plain file name"
        case .insecurePermissions(let path, let mode):
            "\(path) has mode \(String(mode & 0o7777, radix: 8)); it must not be accessible by group or others (chmod 700)"
        case .wrongOwner(let path, let owner): "\(path) belongs to uid \(owner), not to you"
        case .fileTooLarge(let path, let size, let limit): "\(path) is \(size) bytes; no valid file is over \(limit)"
        case .invalidGroupIdentifier(let reason): "invalid group identifier: \(reason)"
        case .injectedFault(let step): "injected fault at write step \(step)"
        }
    }
}
