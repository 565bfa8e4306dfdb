import CofferStore
import CofferFormat
extension RankedIdentity {
    /// The identity as a one-time-code identity (for a ranking of `oneTimeCodeIdentities(for:)`,
    /// whose rows carry the account in `user`).
    public var oneTimeCodeIdentity: OneTimeCodeCredentialIdentity {
        OneTimeCodeCredentialIdentity(
            serviceIdentifier: identity.serviceIdentifier, label: identity.user, recordIdentifier: identity.recordIdentifier,
            rank: identity.rank)
    }
}
