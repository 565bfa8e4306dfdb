import CofferFormat
/// Why a sync could not run. What a remote holds that fails authentication is not here: it is
/// `VaultError.corrupt`, like any other file that fails it (SPEC.md §15.4).
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The container is not a repository with a remote (`coffer sync remote URL` first).
    case notConfigured(container: String)
    /// `git` could not be started.
    case gitMissing(String)
    /// A git command failed: its name, exit status and the last lines it printed.
    case git(command: String, status: Int32, message: String)
    /// git answered something Coffer does not understand.
    case unexpectedOutput(String)
    /// A fetched object is larger than any file of a vault may be.
    case oversized(object: String, size: Int)
    /// The remote holds no vault yet (`coffer clone` of an empty repository).
    case emptyRemote
    /// `clone` into a directory that is not empty.
    case targetNotEmpty(String)
    /// A remote URL with a password in it: git would store it in `.git/config` in clear.
    case credentialsInURL
    /// The repository's configuration is not the one Coffer wrote: a key that could choose a
    /// program or a path git would obey (SPEC.md §15.1). Refused before git runs.
    case plantedConfiguration(file: String, key: String)
    /// git found the repository damaged: an object or its index empty or torn, an object
    /// missing (a power loss before git's data reached the disk). `sync` rebuilds the
    /// container's repository from its sealed files once (SPEC.md §15.4).
    case damagedRepository(command: String, message: String)
    /// The remote's repository is damaged: this device's was rebuilt and git still fails on
    /// what the remote sends.
    case damagedRemote(message: String)
    /// The remote's branch stays locked: `lock` exists on the remote, left by a git that was
    /// stopped while it moved the branch (a crash or power loss on the server).
    case remoteLocked(lock: String)
    /// Every round lost the race to the remote: another device pushed between this one's fetch
    /// and its push (a busy team), or this vault changed under the merge, `rounds` times.
    case outpaced(rounds: Int)

    public var description: String {
        switch self {
        case .notConfigured(let container): "\(container) is not synced (run 'coffer sync remote URL' first)"
        case .gitMissing(let reason): "git is needed for sync: \(reason)"
        case .git(let command, let status, let message):
            "git \(command) failed (exit \(status))" + (message.isEmpty ? "" : ": \(message)")
        case .unexpectedOutput(let what): "unexpected answer from git: \(what)"
        case .oversized(let object, let size): "the remote holds an object of \(size) bytes (\(object)), larger than any vault file"
        case .emptyRemote: "the remote holds no vault"
        case .targetNotEmpty(let path): "\(path) exists and is not empty"
        case .credentialsInURL: "the URL holds a password; git would keep it in clear in .git/config"
        case .plantedConfiguration(let file, let key):
            "\(file) was changed outside Coffer (\(key)); git was not run, since such a setting can make it run a program"
        case .damagedRepository(let command, let message): "git \(command) found the sync repository damaged: \(message)"
        case .damagedRemote(let message): "the remote's repository is damaged: \(message)"
        case .remoteLocked(let lock): "the remote's branch is locked: \(lock) exists, left by a git that was stopped while it moved the branch"
        case .outpaced(let rounds): "another device pushed to the remote first (or this vault changed during the merge) in each of \(rounds) rounds"
        }
    }
}
