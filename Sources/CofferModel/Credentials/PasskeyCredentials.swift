import CofferSupport
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

    package init(relyingParty: String, clientDataHash: [UInt8], credentialID: [UInt8], attestationObject: [UInt8], recordIdentifier: String, authenticatorData: [UInt8], publicKey: [UInt8], algorithm: PasskeyAlgorithm) {
        self.relyingParty = relyingParty
        self.clientDataHash = clientDataHash
        self.credentialID = credentialID
        self.attestationObject = attestationObject
        self.recordIdentifier = recordIdentifier
        self.authenticatorData = authenticatorData
        self.publicKey = publicKey
        self.algorithm = algorithm
    }
}

/// A signed sign-in handed to the client: Apple's `ASPasskeyAssertionCredential`.
public struct PasskeyAssertionCredential: Equatable, Sendable {
    public let userHandle: [UInt8]
    public let relyingParty: String
    public let signature: [UInt8]
    public let clientDataHash: [UInt8]
    public let authenticatorData: [UInt8]
    public let credentialID: [UInt8]

    package init(userHandle: [UInt8], relyingParty: String, signature: [UInt8], clientDataHash: [UInt8], authenticatorData: [UInt8], credentialID: [UInt8]) {
        self.userHandle = userHandle
        self.relyingParty = relyingParty
        self.signature = signature
        self.clientDataHash = clientDataHash
        self.authenticatorData = authenticatorData
        self.credentialID = credentialID
    }
}
