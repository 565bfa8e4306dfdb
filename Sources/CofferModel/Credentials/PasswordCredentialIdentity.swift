import CofferSupport
/// A suggestion the identity store holds: who and where, never the password.
/// Apple's `ASPasswordCredentialIdentity`.
public struct PasswordCredentialIdentity: Hashable, Sendable {
    public let serviceIdentifier: CredentialServiceIdentifier
    public let user: String
    /// The record this identity comes from; the provider reads the password from it.
    public let recordIdentifier: String
    /// Relevance among identities for the same service; higher is offered first.
    public var rank: Int

    public init(serviceIdentifier: CredentialServiceIdentifier, user: String, recordIdentifier: String, rank: Int = 0) {
        self.serviceIdentifier = serviceIdentifier
        self.user = user
        self.recordIdentifier = recordIdentifier
        self.rank = rank
    }
}
