import CofferFormat
/// An SSH public key as the agent protocol, `authorized_keys` and fingerprints show it
/// (RFC 4253 §6.6, RFC 8709 for Ed25519): the *blob* is `string "ssh-ed25519" ‖ string key`.
public struct SSHPublicKey: Equatable, Hashable, Sendable {
    public static let ed25519Type = "ssh-ed25519"

    public let blob: [UInt8]
    /// The raw 32-byte Ed25519 public key.
    public let ed25519Key: [UInt8]

    public init(ed25519 key: [UInt8]) {
        var writer = SSHWireWriter()
        writer.string(Self.ed25519Type)
        writer.string(key)
        blob = writer.bytes
        ed25519Key = key
    }

    /// A blob of an Ed25519 key; `nil` for any other key type or a malformed blob.
    public init?(blob: [UInt8]) {
        let parsed: [UInt8]? = blob.withUnsafeBytes { buffer in
            var reader = SSHWireReader(buffer)
            guard (try? reader.text()) == Self.ed25519Type, let key = try? reader.string(),
                  key.count == Ed25519SigningKey.publicKeyLength, reader.isAtEnd else { return nil }
            return key
        }
        guard let parsed else { return nil }
        self.blob = blob
        ed25519Key = parsed
    }

    /// `ssh-ed25519 AAAA… [comment]`, as `authorized_keys` and `ssh-add -L` print it.
    public init?(authorizedKeysLine line: String) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard words.count >= 2, words[0] == Self.ed25519Type, let blob = Base64.decode(String(words[1])) else { return nil }
        self.init(blob: blob)
    }

    /// `ssh-ed25519 AAAA…` without a comment: what an ssh-key item's index entry carries (SPEC.md §7.3).
    public var authorizedKeysText: String { Self.ed25519Type + " " + Base64.encode(blob) }

    /// `SHA256:…` as `ssh-keygen -l` prints it: unpadded base64 of the blob's SHA-256.
    public var fingerprint: String {
        var encoded = Base64.encode(SHA256Digest.hash(blob))
        while encoded.hasSuffix("=") { encoded.removeLast() }
        return "SHA256:" + encoded
    }
}
