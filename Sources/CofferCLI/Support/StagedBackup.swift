import Coffer
import CofferTerminalKit
import FoundationEssentials

/// A backup file unpacked into a private scratch directory to be opened like a container
/// (verify, and restore's look before it replaces anything); removed when released.
final class StagedBackup {
    let directory: String
    var container: GroupContainer { GroupContainer(path: directory + "/vault") }

    /// On a tmpfs when there is one (`/dev/shm`): the copy is sealed files that are only read
    /// and removed, and creating 10,000 of them on ext4 took most of a verify's time.
    init(_ source: String) throws {
        let memory = FileSystem.isWritable("/dev/shm") ? "/dev/shm" : nil
        directory = try FileSystem.standard.makeTemporaryDirectory(prefix: "coffer-backup", in: memory)
        do {
            try VaultBackup.restore(from: source, into: GroupContainer(path: directory + "/vault"), replacing: false, durable: false)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Whether `path` is a directory (a container or a directory backup) rather than a backup
    /// file; `nil` when nothing is there.
    static func isDirectory(_ path: String) -> Bool? {
        ((try? FileSystem.standard.userPathStatus(path)) ?? nil).map { $0.kind == .directory }
    }
}

extension CommandContext {
    /// The live vault's generation when this device can read it (store enabled, or a session).
    func openLiveGeneration() throws -> UInt64? {
        let live = try Vault.open(container(), configuration: vaultConfiguration)
        unlockFromSession(live)
        return try? live.indexGeneration()
    }
}
