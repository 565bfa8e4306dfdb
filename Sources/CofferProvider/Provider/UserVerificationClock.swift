import CofferStore
import CofferFormat
import Synchronization

/// When a person last proved the master password (an unlock or a re-entry), so that a passkey
/// operation shortly after may say the user was verified (WebAuthn's `UV` flag, SPEC.md §8.2.1).
/// A long-lived host (the browser host) keeps one and hands it to each request's provider; a
/// keyring session opened by another process proves nothing here.
public final class UserVerificationClock: Sendable {
    /// How long a proven master password counts as user verification.
    public static let window: Duration = .seconds(300)
    private let verifiedAt = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    public func markVerified() { verifiedAt.withLock { $0 = .now } }

    /// Whether the master password was proven within `window`.
    public var isRecent: Bool {
        verifiedAt.withLock { instant in instant.map { $0.duration(to: .now) <= Self.window } ?? false }
    }
}
