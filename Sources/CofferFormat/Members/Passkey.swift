import CofferSupport
import CofferCrypto
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

    /// The member as the record stores it; defaults (`userDisplayName` empty, `counter` 0,
    /// `discoverable` true) are left out when `omittingDefaults`.
    func json(omittingDefaults: Bool) -> JSONValue {
        var members: JSONObject = [
            "credentialId": .string(Base64.encodeURL(credentialID)), "rpId": .string(relyingPartyIdentifier),
            "userHandle": .string(Base64.encodeURL(userHandle)), "username": .string(userName), "key": .string(Base64.encodeURL(privateKey)),
            "created": .string(UTCTimestamp.format(created)),
        ]
        if !userDisplayName.isEmpty || !omittingDefaults { members["userDisplayName"] = .string(userDisplayName) }
        if signCount != 0 || !omittingDefaults { members["counter"] = .integer(UInt64(signCount)) }
        if !discoverable || !omittingDefaults { members["discoverable"] = .bool(discoverable) }
        return .object(members)
    }

    /// The member read back; `nil` for a wrong type, a missing required member or a length out of
    /// range. The key is not parsed here: a key that does not load makes the passkey unusable,
    /// not the record corrupt (as an SSH key, SPEC.md §6.3).
    init?(json: JSONValue) {
        guard let members = json.objectValue,
              let credentialID = members["credentialId"]?.stringValue.flatMap(Base64.decodeURL),
              let relyingPartyIdentifier = members["rpId"]?.stringValue,
              let userHandle = members["userHandle"]?.stringValue.flatMap(Base64.decodeURL),
              let userName = members["username"]?.stringValue,
              let privateKey = members["key"]?.stringValue.flatMap(Base64.decodeURL),
              let created = members["created"]?.stringValue.flatMap(UTCTimestamp.parse)
        else { return nil }
        let displayName = members["userDisplayName"], counter = members["counter"], discoverable = members["discoverable"]
        guard displayName == nil || displayName?.stringValue != nil,
              counter == nil || counter?.uint64Value.map({ $0 <= UInt64(UInt32.max) }) == true,
              discoverable == nil || discoverable?.boolValue != nil
        else { return nil }
        self.init(
            credentialID: credentialID, relyingPartyIdentifier: relyingPartyIdentifier, userHandle: userHandle, userName: userName,
            userDisplayName: displayName?.stringValue ?? "", privateKey: privateKey, signCount: UInt32(counter?.uint64Value ?? 0),
            created: created, discoverable: discoverable?.boolValue ?? true)
        guard isWellFormed else { return nil }
    }
}
