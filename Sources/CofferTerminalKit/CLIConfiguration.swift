import CofferProvider
import CofferHostKit

/// Library-level settings a host (or a test) chooses; not reachable from argv or the environment.
public struct CLIConfiguration: Sendable {
    /// KDF costs a vault header may ask for.
    public var kdfPolicy: KDFPolicy
    /// Replaces `init --kdf` costs; for tests only.
    public var kdfOverride: KDFParameters?
    public var fileSystem: FileSystem
    /// Unlock sessions shared between processes; `nil` keeps every run self-contained.
    public var sessions: KeyringSessions?
    /// Whether `fill` asks the fill agent and `unlock` starts it (SPEC.md §8.5). Off for a
    /// host that runs commands in its own process (tests), where no agent could see its settings.
    public var usesFillAgent: Bool
    /// The system's authentication (polkit), for a host that can reach the system bus: the CLI's
    /// (the credential helpers link no D-Bus and leave it out).
    public var systemAuthenticator: (@Sendable () -> (any SystemAuthenticator)?)?

    public init(
        kdfPolicy: KDFPolicy = .standard, kdfOverride: KDFParameters? = nil, fileSystem: FileSystem = .standard,
        sessions: KeyringSessions? = KeyringSessions(), usesFillAgent: Bool = false
    ) {
        self.kdfPolicy = kdfPolicy
        self.kdfOverride = kdfOverride
        self.fileSystem = fileSystem
        self.sessions = sessions
        self.usesFillAgent = usesFillAgent
    }

    /// The real `coffer` process's.
    public static let standard = CLIConfiguration(usesFillAgent: true)
}
