import CofferStore
/// The public half of a person's identity (SPEC.md §16.1): an Ed25519 key that signs
/// membership entries and an X25519 key that team vault keys are sealed to.
///
/// Written as one copy-pasteable string, `coffer1` followed by lowercase base32 (RFC 4648,
/// no padding: no character a terminal's double-click splits at) of signing key ‖ receiving
/// key ‖ the first 4 bytes of BLAKE2b-256 of both (a typo is caught, never turned into another
/// person's key), and read aloud as a fingerprint.
public struct TeamRecipient: Hashable, Sendable {
    public let signingKey: [UInt8]
    public let receivingKey: [UInt8]

    public init(signingKey: [UInt8], receivingKey: [UInt8]) {
        self.signingKey = signingKey
        self.receivingKey = receivingKey
    }

    static let prefix = "coffer1"

    private var keyBytes: [UInt8] { signingKey + receivingKey }
    private var digest: [UInt8] { (try? BLAKE2b.hash(keyBytes, length: 32)) ?? [] }

    /// The recipient string `coffer whoami` prints and `coffer team add` takes.
    public var text: String { Self.prefix + Self.base32(keyBytes + digest.prefix(4)) }

    private static func base32(_ bytes: [UInt8]) -> String {
        String(Base32.encode(bytes).lowercased().filter { $0 != "=" })
    }

    /// Parses a recipient string (surrounding white space is ignored).
    public init(text: String) throws(FormatError) {
        let trimmed = text.trimmingWhitespace
        let letters = String(trimmed.dropFirst(Self.prefix.count))
        // One spelling only: liboath's decoder forgives case, spaces and dashes.
        guard trimmed.hasPrefix(Self.prefix), let bytes = try? Base32.decode(letters), bytes.count == 68, Self.base32(bytes) == letters else {
            throw .invalidIdentifier
        }
        let recipient = TeamRecipient(signingKey: Array(bytes[0..<32]), receivingKey: Array(bytes[32..<64]))
        guard Array(recipient.digest.prefix(4)) == Array(bytes[64..<68]) else { throw .invalidIdentifier }
        self = recipient
    }

    /// Thirty digits in six groups, for two people to compare aloud (Signal's safety numbers):
    /// each group is five bytes of BLAKE2b-256(signing key ‖ receiving key), big-endian, modulo
    /// 100,000, written with five digits.
    public var fingerprint: String {
        let digest = digest
        return (0..<6).map { group -> String in
            let value = digest[(group * 5)..<(group * 5 + 5)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let digits = String(value)
            return String(repeating: "0", count: 5 - digits.count) + digits
        }.joined(separator: " ")
    }
}

extension PersonalIdentity {
    /// This person as a team's key file names them.
    public var recipient: TeamRecipient {
        TeamRecipient(signingKey: signing.publicKey, receivingKey: receiving.publicKey)
    }
}
