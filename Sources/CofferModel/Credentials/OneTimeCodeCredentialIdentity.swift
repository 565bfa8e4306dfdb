import CofferSupport
/// A one-time code the identity store can suggest: where and whose, never the secret.
/// Apple's `ASOneTimeCodeCredentialIdentity` (iOS 18).
public struct OneTimeCodeCredentialIdentity: Hashable, Sendable {
    public let serviceIdentifier: CredentialServiceIdentifier
    /// What the person sees: the account the code belongs to (Apple's `label`).
    public let label: String
    public let recordIdentifier: String
    public var rank: Int

    public init(serviceIdentifier: CredentialServiceIdentifier, label: String, recordIdentifier: String, rank: Int = 0) {
        self.serviceIdentifier = serviceIdentifier
        self.label = label
        self.recordIdentifier = recordIdentifier
        self.rank = rank
    }
}

/// A code handed to the host. Apple's `ASOneTimeCodeCredential`.
public struct OneTimeCodeCredential: Equatable, Sendable {
    public let code: String

    public init(code: String) {
        self.code = code
    }
}

extension OneTimeCodeCredential: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "OneTimeCodeCredential(code: <redacted>)" }
    public var debugDescription: String { description }
}
