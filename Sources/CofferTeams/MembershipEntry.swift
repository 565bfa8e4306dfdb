import CofferStore
/// One change of a team's membership (SPEC.md §16.2): who, what, which vault key is in force
/// after it, signed by an admin and chained to the entry before by its hash.
///
///     0    1  action: 1 found, 2 add, 3 remove, 4 role
///     1    1  the subject's role after it: 0 member, 1 admin (0 for a removal)
///     2    8  sequence number, u64 LE (the entry's position, from 0)
///     10   8  time, Unix seconds, u64 LE (what the signer's clock said; informative)
///     18  32  BLAKE2b-256 of the previous entry (zero for the founding entry)
///     50  32  the subject's Ed25519 public key (who they are)
///     82  32  the subject's X25519 public key (where their copy of the vault key goes)
///     114 32  the id of the vault key in force after this entry (SPEC.md §16.2)
///     146 32  the signer's Ed25519 public key
///     178  1  N, the subject's name length (1…64), then N bytes of UTF-8
///          1  T, the team's name length (1…64 in the founding entry, else 0), then T bytes
///         64  Ed25519 signature of "COFFER team v1" ‖ team vault id ‖ every byte before it
public struct MembershipEntry: Equatable, Sendable {
    public enum Action: UInt8, Sendable {
        case found = 1
        case add = 2
        case remove = 3
        case role = 4
    }

    public var action: Action
    public var isAdmin: Bool
    public var sequence: UInt64
    public var time: UInt64
    public var previousHash: [UInt8]
    public var subject: TeamRecipient
    public var keyID: [UInt8]
    public var signer: [UInt8]
    public var name: String
    /// The team's name: only in the founding entry.
    public var teamName: String
    public var signature: [UInt8]

    public init(
        action: Action, isAdmin: Bool, sequence: UInt64, time: UInt64, previousHash: [UInt8], subject: TeamRecipient, keyID: [UInt8],
        signer: [UInt8], name: String, teamName: String, signature: [UInt8]
    ) {
        self.action = action
        self.isAdmin = isAdmin
        self.sequence = sequence
        self.time = time
        self.previousHash = previousHash
        self.subject = subject
        self.keyID = keyID
        self.signer = signer
        self.name = name
        self.teamName = teamName
        self.signature = signature
    }

    static let fixedLength = 178
    static let maximumNameLength = 64
    static let maximumLength = fixedLength + 2 + 2 * maximumNameLength + Ed25519SigningKey.signatureLength
    static let signingContext = Array("COFFER team v1".utf8)

    /// The bytes the signature covers, without the signature.
    var signedBytes: [UInt8] {
        var bytes: [UInt8] = [action.rawValue, isAdmin ? 1 : 0]
        bytes += LittleEndian.bytes(sequence) + LittleEndian.bytes(time) + previousHash
        bytes += subject.signingKey + subject.receivingKey + keyID + signer
        bytes += [UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(teamName.utf8.count)] + Array(teamName.utf8)
        return bytes
    }

    public var encoded: [UInt8] { signedBytes + signature }

    /// What the entry did, for a person: "add erin", "remove carol", "make bob an admin".
    public var summary: String {
        switch action {
        case .found: "found the team as \(name)"
        case .add: "add \(name)" + (isAdmin ? " as an admin" : "")
        case .remove: "remove \(name)"
        case .role: isAdmin ? "make \(name) an admin" : "make \(name) no longer an admin"
        }
    }

    /// BLAKE2b-256 of the whole entry, signature included: what the next entry chains to.
    public var hash: [UInt8] { (try? BLAKE2b.hash(encoded, length: 32)) ?? [] }

    static func message(_ signed: [UInt8], teamID: VaultID) -> [UInt8] {
        signingContext + teamID.bytes + signed
    }

    /// Signs the entry as `signer` (who must be an admin of the team at this point).
    public mutating func sign(with key: Ed25519SigningKey, teamID: VaultID) throws(CryptoError) {
        signer = key.publicKey
        signature = try key.sign(Self.message(signedBytes, teamID: teamID))
    }

    public func hasValidSignature(teamID: VaultID) -> Bool {
        Ed25519SigningKey.isValidSignature(signature, of: Self.message(signedBytes, teamID: teamID), publicKey: signer)
    }

    /// Parses one entry; only its shape, nothing about the chain it belongs to.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(FormatError) -> MembershipEntry {
        let bytes = Array(bytes)
        guard bytes.count >= fixedLength + 2 + Ed25519SigningKey.signatureLength, bytes.count <= maximumLength else { throw .badLength }
        guard let action = Action(rawValue: bytes[0]) else { throw .nonCanonical("unknown membership action \(bytes[0])") }
        guard bytes[1] <= 1 else { throw .nonCanonical("role byte \(bytes[1])") }
        var offset = fixedLength
        func text(_ what: String, allowEmpty: Bool) throws(FormatError) -> String {
            let length = Int(bytes[offset])
            guard length <= maximumNameLength, allowEmpty || length > 0, offset + 1 + length <= bytes.count else {
                throw .nonCanonical("\(what) length \(length)")
            }
            guard let string = String(strictUTF8: bytes[(offset + 1)..<(offset + 1 + length)]), string.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                throw .nonCanonical("\(what) is not printable UTF-8")
            }
            offset += 1 + length
            return string
        }
        let name = try text("name", allowEmpty: false)
        let teamName = try text("team name", allowEmpty: true)
        guard bytes.count - offset == Ed25519SigningKey.signatureLength else { throw .badLength }
        return MembershipEntry(
            action: action, isAdmin: bytes[1] == 1, sequence: LittleEndian.read(UInt64.self, from: bytes, at: 2),
            time: LittleEndian.read(UInt64.self, from: bytes, at: 10), previousHash: Array(bytes[18..<50]),
            subject: TeamRecipient(signingKey: Array(bytes[50..<82]), receivingKey: Array(bytes[82..<114])),
            keyID: Array(bytes[114..<146]), signer: Array(bytes[146..<178]), name: name, teamName: teamName,
            signature: Array(bytes[offset...]))
    }
}
