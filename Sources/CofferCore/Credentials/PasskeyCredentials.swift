/// A new passkey handed to the client: Apple's `ASPasskeyRegistrationCredential`.
public struct PasskeyRegistrationCredential: Equatable, Sendable {
    public let relyingParty: String
    public let clientDataHash: [UInt8]
    public let credentialID: [UInt8]
    /// CBOR `{fmt: "none", attStmt: {}, authData}` (WebAuthn §6.5).
    public let attestationObject: [UInt8]
    /// Which item now holds it.
    public let recordIdentifier: String
    /// What a browser also hands the page (`getAuthenticatorData()`, `getPublicKey()` as a DER
    /// SubjectPublicKeyInfo, `getPublicKeyAlgorithm()`), so scripts need not parse CBOR.
    public let authenticatorData: [UInt8]
    public let publicKey: [UInt8]
    public let algorithm: PasskeyAlgorithm
}

/// A signed sign-in handed to the client: Apple's `ASPasskeyAssertionCredential`.
public struct PasskeyAssertionCredential: Equatable, Sendable {
    public let userHandle: [UInt8]
    public let relyingParty: String
    public let signature: [UInt8]
    public let clientDataHash: [UInt8]
    public let authenticatorData: [UInt8]
    public let credentialID: [UInt8]
}
