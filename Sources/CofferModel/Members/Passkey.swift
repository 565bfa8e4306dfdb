import CofferSupport
import FoundationEssentials

/// A passkey (a WebAuthn discoverable credential) kept on a login: the `passkey` member of the
/// record document (SPEC.md §6.4). Its members take the Credential Exchange Format's names
/// (`credentialId`, `rpId`, `username`, `userDisplayName`, `userHandle`, `key`), so an export
/// and an import move one without renaming anything.
///
/// - Warning: `privateKey` is the PKCS#8 DER of the secret key, in ordinary memory like the
///   record's password; `PasskeyPrivateKey` loads it for one signature.
public struct Passkey: Equatable, Sendable {
    /// The credential's id, chosen by the authenticator: 16 random bytes for a passkey Coffer made.
    public var credentialID: [UInt8]
    /// The relying party's id: a domain (`example.com`), never a URL.
    public var relyingPartyIdentifier: String
    /// The relying party's opaque account id (`user.id`), 1–64 bytes.
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var privateKey: [UInt8]
    /// The signature counter (SPEC.md §6.4): 0 for passkeys Coffer makes, and then always 0.
    public var signCount: UInt32
    public var created: Date
    /// Whether a relying party may find it without naming it (`allowCredentials` empty).
    public var discoverable: Bool
    /// Set when the relying party signalled it no longer accepts it (the Signal API): it is
    /// then offered nowhere, yet kept until `PasskeyHiding.retention` has passed.
    public var hidden: PasskeyHiding? = nil
    /// The account names the relying party replaced (`signalCurrentUserDetails`), newest first.
    public var formerNames: [PasskeyFormerName] = []

    public init(
        credentialID: [UInt8], relyingPartyIdentifier: String, userHandle: [UInt8], userName: String, userDisplayName: String = "",
        privateKey: [UInt8], signCount: UInt32 = 0, created: Date, discoverable: Bool = true
    ) {
        self.credentialID = credentialID
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.privateKey = privateKey
        self.signCount = signCount
        self.created = created
        self.discoverable = discoverable
    }

    public static let credentialIDLengths = 1...1023
    public static let userHandleLengths = 1...64
    public static let relyingPartyIdentifierLengths = 1...253

    /// Whether ids, handle and relying party are within SPEC.md §6.4's lengths and there is a key:
    /// what the record reader and every importer hold a passkey to (the key itself is checked
    /// when it signs).
    public var isWellFormed: Bool {
        Self.credentialIDLengths.contains(credentialID.count) && Self.userHandleLengths.contains(userHandle.count)
            && Self.relyingPartyIdentifierLengths.contains(relyingPartyIdentifier.utf8.count) && !privateKey.isEmpty
            && RelyingPartyIdentifier.isCanonical(relyingPartyIdentifier)
    }
}

/// Why and since when a passkey is hidden (SPEC.md §6.4): a relying party's signal hides it, and
/// nothing is deleted on a page's word alone — a hidden passkey is restorable for 30 days.
public struct PasskeyHiding: Equatable, Sendable {
    public enum Reason: String, Sendable {
        /// `signalUnknownCredential`: the site does not know the credential.
        case unknown
        /// `signalAllAcceptedCredentials`: the site's list for the account does not hold it.
        case notAccepted
    }

    public var reason: Reason
    public var since: Date
    /// How long a hidden passkey is kept before it may be removed.
    public static let retention: TimeInterval = 30 * 86_400

    public init(reason: Reason, since: Date) {
        self.reason = reason
        self.since = since
    }

    /// What a person reads: "the site reported it unknown", "the site no longer accepts it".
    public var explanation: String {
        switch reason {
        case .unknown: "the site reported it unknown"
        case .notAccepted: "the site's list of accepted passkeys for the account left it out"
        }
    }
}

/// A user name and display name a relying party replaced, and when.
public struct PasskeyFormerName: Equatable, Sendable {
    public var userName: String
    public var userDisplayName: String
    public var replaced: Date

    public init(userName: String, userDisplayName: String, replaced: Date) {
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.replaced = replaced
    }

    public static let maximumCount = 20
}
