/// The messages of the SSH agent protocol (draft-miller-ssh-agent) that Coffer's agent speaks.
/// A message on the socket is `uint32 length ‖ type byte ‖ contents`; this type sees the part
/// after the length. Keys are managed in the vault, so requests to add, remove or lock keys are
/// answered with `SSH_AGENT_FAILURE`, as the draft says for a request an agent does not support.
import CofferProvider
import CofferHostKit
public enum SSHAgentRequest: Equatable, Sendable {
    /// `SSH_AGENTC_REQUEST_IDENTITIES` (11).
    case requestIdentities
    /// `SSH_AGENTC_SIGN_REQUEST` (13).
    case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
    /// Anything else, by type byte (an empty message is type 0).
    case unsupported(UInt8)

    public static let requestIdentitiesType: UInt8 = 11
    public static let signRequestType: UInt8 = 13
    /// The draft's limit (and OpenSSH's `AGENT_MAX_LEN`): longer messages are refused unread.
    public static let maximumLength = 256 * 1024

    /// - Throws: `SSHWireError` for a known type whose contents are malformed (truncated, or
    ///   trailing bytes): answered with failure like an unknown one.
    public init(_ message: UnsafeRawBufferPointer) throws(SSHWireError) {
        var reader = SSHWireReader(message)
        guard let type = try? reader.byte() else {
            self = .unsupported(0)
            return
        }
        switch type {
        case Self.requestIdentitiesType:
            guard reader.isAtEnd else { throw .malformed("bytes after the request") }
            self = .requestIdentities
        case Self.signRequestType:
            let blob = try reader.string(), data = try reader.string(), flags = try reader.uint32()
            guard reader.isAtEnd else { throw .malformed("bytes after the request") }
            self = .sign(keyBlob: blob, data: data, flags: flags)
        default:
            self = .unsupported(type)
        }
    }
}

/// The agent's answers, each a whole frame (length included).
public enum SSHAgentReply {
    /// `SSH_AGENT_FAILURE` (5).
    public static let failure: [UInt8] = framed([5])

    /// `SSH_AGENT_IDENTITIES_ANSWER` (12): every key blob with its comment.
    public static func identities(_ keys: [(key: SSHPublicKey, comment: String)]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.byte(12)
        writer.uint32(UInt32(keys.count))
        for (key, comment) in keys {
            writer.string(key.blob)
            writer.string(comment)
        }
        return framed(writer.bytes)
    }

    /// `SSH_AGENT_SIGN_RESPONSE` (14) with an `ssh-ed25519` signature (RFC 8709 §6).
    public static func signature(_ signature: [UInt8]) -> [UInt8] {
        var inner = SSHWireWriter()
        inner.string(SSHPublicKey.ed25519Type)
        inner.string(signature)
        var writer = SSHWireWriter()
        writer.byte(14)
        writer.string(inner.bytes)
        return framed(writer.bytes)
    }

    static func framed(_ payload: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(payload)
        return writer.bytes
    }
}
