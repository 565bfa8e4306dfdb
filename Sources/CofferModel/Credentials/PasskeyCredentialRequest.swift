import CofferSupport
/// Whether the relying party wants the person verified (WebAuthn's
/// `UserVerificationRequirement`; Apple's `ASAuthorizationPublicKeyCredentialUserVerificationPreference`).
public enum UserVerificationPreference: String, Sendable {
    case required
    case preferred
    case discouraged
}

/// What a relying party asks of a passkey sign-in before anyone chose one: Apple's
/// `ASPasskeyCredentialRequestParameters` (iOS 17.4), given to `prepareCredentialList(for:requestParameters:)`.
public struct PasskeyCredentialRequestParameters: Sendable {
    public let relyingPartyIdentifier: String
    /// SHA-256 of the `clientDataJSON` the client (the browser extension) built.
    public let clientDataHash: [UInt8]
    public let userVerificationPreference: UserVerificationPreference
    /// The credentials the relying party accepts; empty means any of its discoverable ones.
    public let allowedCredentials: [[UInt8]]

    public init(
        relyingPartyIdentifier: String, clientDataHash: [UInt8], userVerificationPreference: UserVerificationPreference,
        allowedCredentials: [[UInt8]] = []
    ) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.clientDataHash = clientDataHash
        self.userVerificationPreference = userVerificationPreference
        self.allowedCredentials = allowedCredentials
    }
}

/// One passkey operation for one identity: Apple's `ASPasskeyCredentialRequest`. For a sign-in,
/// `credentialIdentity` is the chosen passkey; for a registration, it names the relying party
/// and the new account (its `credentialID` empty, its `recordIdentifier` empty).
public struct PasskeyCredentialRequest: Sendable {
    public let credentialIdentity: PasskeyCredentialIdentity
    public let clientDataHash: [UInt8]
    public let userVerificationPreference: UserVerificationPreference
    /// For a registration: the algorithms the relying party accepts, in its order of preference.
    public let supportedAlgorithms: [PasskeyAlgorithm]
    /// For a registration: credentials the account already has (`excludeCredentials`); one of
    /// them in the vault refuses the registration (WebAuthn's `InvalidStateError`).
    public let excludedCredentials: [[UInt8]]
    /// The account's display name (`user.displayName`), for a registration.
    public let userDisplayName: String

    public init(
        credentialIdentity: PasskeyCredentialIdentity, clientDataHash: [UInt8], userVerificationPreference: UserVerificationPreference,
        supportedAlgorithms: [PasskeyAlgorithm] = [], excludedCredentials: [[UInt8]] = [], userDisplayName: String = ""
    ) {
        self.credentialIdentity = credentialIdentity
        self.clientDataHash = clientDataHash
        self.userVerificationPreference = userVerificationPreference
        self.supportedAlgorithms = supportedAlgorithms
        self.excludedCredentials = excludedCredentials
        self.userDisplayName = userDisplayName
    }
}
