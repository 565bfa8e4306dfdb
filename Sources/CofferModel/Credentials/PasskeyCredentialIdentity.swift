import CofferSupport
/// A passkey the identity store can suggest: for which relying party, whose, and which
/// credential — never the key. Apple's `ASPasskeyCredentialIdentity` (iOS 17).
public struct PasskeyCredentialIdentity: Hashable, Sendable {
    /// The relying party's id (`example.com`).
    public let relyingPartyIdentifier: String
    public let userName: String
    public let credentialID: [UInt8]
    public let userHandle: [UInt8]
    public let recordIdentifier: String
    public var rank: Int

    public init(
        relyingPartyIdentifier: String, userName: String, credentialID: [UInt8], userHandle: [UInt8], recordIdentifier: String, rank: Int = 0
    ) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.userName = userName
        self.credentialID = credentialID
        self.userHandle = userHandle
        self.recordIdentifier = recordIdentifier
        self.rank = rank
    }
}
