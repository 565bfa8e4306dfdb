import CofferFormat
import FoundationEssentials

/// Where a vault keeps device-local state and how strictly it reads headers. Hosts use
/// `.standard(environment:)`; tests point `stateDirectory` at a temp directory and relax the
/// KDF policy through the API.
public struct VaultConfiguration: Sendable {
    public var kdfPolicy: KDFPolicy
    public var fileSystem: FileSystem
    /// Root of device-local state (SPEC.md §7.6): `$XDG_STATE_HOME/coffer`, by default
    /// `~/.local/state/coffer`. Never inside the container, so a copy of the container alone
    /// cannot read the identity index.
    public var stateDirectory: String
    /// Identity buckets kept between requests by a long-lived host (`nil`: read each time, as a
    /// one-shot command should).
    public var identityBucketCache: IdentityBucketCache?
    /// Index shards at least this large are kept in parts on this device (SPEC.md §7.6). Tests
    /// lower it through the API to split small buckets; the default is never changed.
    public var bucketPartsThreshold = 32 << 10
    /// The listing snapshot is cut into chunks of about this many bytes (SPEC.md §7.6): small
    /// enough that every core shares a listing and an edit rewrites a little of it, large
    /// enough that a million rows make ~100 files. Lowered only by tests.
    public var listingChunkLength = 1 << 20
    /// Told when a command finds a write that a crash or a `kill -9` cut short and finishes it
    /// (SPEC.md §7.5): undoing a large import can take seconds, and a person should know why
    /// the command waits. The text says what is done ("removing the 50000 records …"). Also told
    /// when a password unlock rewrites an older index layout, which reads every record once.
    public var recoveryNotice: (@Sendable (String) -> Void)?

    public init(kdfPolicy: KDFPolicy = .standard, fileSystem: FileSystem = .standard, stateDirectory: String) {
        self.kdfPolicy = kdfPolicy
        self.fileSystem = fileSystem
        self.stateDirectory = stateDirectory
    }

    public static func standard(environment: Environment = .process) -> VaultConfiguration {
        VaultConfiguration(stateDirectory: stateHome(environment) + "/coffer")
    }

    static func stateHome(_ environment: Environment) -> String {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg }
        return GroupContainer.homeDirectory(environment) + "/.local/state"
    }
}
