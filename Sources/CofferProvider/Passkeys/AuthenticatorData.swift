import CofferStore
import CofferFormat
/// What an authenticator signs and returns (WebAuthn Level 3 §6.1): the relying party's hash,
/// flags, the counter and, on registration, the new credential.
public enum AuthenticatorData {
    /// Coffer's AAGUID (WebAuthn §6.1.1), the same for every Coffer: it names the kind of
    /// authenticator, not the person or the device.
    public static let aaguid: [UInt8] = Hex.decode("37daade0720d4806ad1a639b44632d1e")!

    /// Flag bits (§6.1): user present, user verified, backup eligible, backed up, attested
    /// credential data included.
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
    }

    /// `SHA-256(rpId) ‖ flags ‖ signCount (u32 BE) ‖ [AAGUID ‖ credential id length (u16 BE) ‖
    /// credential id ‖ COSE public key]`. A Coffer passkey is synced (git, backups), so it is
    /// always backup eligible and backed up, as Apple's and Google's synced passkeys say.
    /// - Parameter userPresent: false only for a conditional registration (WebAuthn L3 §6.3.2:
    ///   made without a person's gesture, so neither UP nor UV is set).
    public static func encode(
        relyingPartyIdentifier: String, userVerified: Bool, signCount: UInt32, attested: (credentialID: [UInt8], publicKey: CBOR)? = nil,
        userPresent: Bool = true
    ) -> [UInt8] {
        var flags: Flags = [.backupEligible, .backedUp]
        if userPresent { flags.insert(.userPresent) }
        if userVerified { flags.insert(.userVerified) }
        if attested != nil { flags.insert(.attestedCredentialData) }
        var bytes = SHA256Digest.hash(Array(relyingPartyIdentifier.utf8))
        bytes.append(flags.rawValue)
        bytes += withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let attested {
            bytes += aaguid
            bytes += withUnsafeBytes(of: UInt16(attested.credentialID.count).bigEndian, Array.init)
            bytes += attested.credentialID
            bytes += attested.publicKey.encoded
        }
        return bytes
    }

    /// The attestation object of a registration with `none` attestation (§8.7): Coffer makes no
    /// claim about its make or model beyond the AAGUID.
    public static func noneAttestationObject(authenticatorData: [UInt8]) -> [UInt8] {
        CBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authenticatorData))]).encoded
    }
}
