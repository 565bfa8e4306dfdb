import Foundation
import Synchronization

/// Directories a test process makes under the system's temp directory, all removed when the
/// process exits: a test run leaves nothing behind. (Before this, every run left a few hundred
/// containers in /tmp; 42,000 had piled up on the development machine.)
public enum ScratchDirectories {
    private static let made = Mutex<[String]>([])

    private static let removedAtExit: Void = {
        atexit {
            for path in ScratchDirectories.made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
    }()

    /// A new empty directory (mode 0700) named `prefix-UUID`.
    public static func make(prefix: String) -> String {
        _ = removedAtExit
        let path = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UUID().uuidString)"
        mkdir(path, 0o700)
        made.withLock { $0.append(path) }
        return path
    }
}
