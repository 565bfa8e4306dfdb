/// The fill agent's messages (SPEC.md §8.5): `FramedSocketServer` frames whose bodies use the
/// SSH wire encoding (`byte`, `uint32`, `string`). Pure: no I/O, tested apart from the socket.
import CofferProvider
import CofferHostKit
public enum FillAgentRequest: Equatable, Sendable {
    /// A silent fill, exactly as `coffer fill` would run it in the client's place.
    case fill(FillAgentFill)
    /// "Are you still needed?" (`coffer lock` asks): the agent answers `ok`, then ends when no
    /// session it serves is live.
    case check

    static let fillType: UInt8 = 1
    static let checkType: UInt8 = 2
    /// The longest request the agent reads (a URL and a few paths fit many times over).
    public static let maximumLength = 64 << 10

    public var encoded: [UInt8] {
        var writer = SSHWireWriter()
        switch self {
        case .check:
            writer.byte(Self.checkType)
        case .fill(let fill):
            writer.byte(Self.fillType)
            writer.string(fill.version)
            writer.string(fill.container)
            writer.uint32(UInt32(fill.environment.count))
            for (name, value) in fill.environment {
                writer.string(name)
                writer.string(value)
            }
            writer.string(fill.service)
            writer.byte(fill.kind == .oneTimeCode ? 1 : 0)
            writer.byte(fill.user == nil ? 0 : 1)
            if let user = fill.user { writer.string(user) }
        }
        return FramedSocketServer.frame(writer.bytes)
    }

    /// Decodes a frame's body; a truncated, unknown or trailing-byte body throws.
    public init(_ body: [UInt8]) throws {
        self = try body.withUnsafeBytes { try Self.decode($0) }
    }

    private static func decode(_ buffer: UnsafeRawBufferPointer) throws(SSHWireError) -> FillAgentRequest {
        var reader = SSHWireReader(buffer)
        let request: FillAgentRequest
        switch try reader.byte() {
        case Self.checkType:
            request = .check
        case Self.fillType:
            let version = try reader.text(), container = try reader.text()
            let count = try reader.uint32()
            guard count <= UInt32(FillAgentFill.environmentNames.count) else { throw .malformed("too many environment variables") }
            var environment: [(String, String)] = []
            for _ in 0..<count {
                let name = try reader.text(), value = try reader.text()
                guard FillAgentFill.environmentNames.contains(name), !environment.contains(where: { $0.0 == name }) else {
                    throw .malformed("an unexpected environment variable")
                }
                environment.append((name, value))
            }
            let service = try reader.text()
            let kind: AutoFillHost.FillKind = switch try reader.byte() {
            case 0: .password
            case 1: .oneTimeCode
            default: throw .malformed("an unknown kind of fill")
            }
            let user: String? = switch try reader.byte() {
            case 0: nil
            case 1: try reader.text()
            default: throw .malformed("a malformed user flag")
            }
            request = .fill(FillAgentFill(version: version, container: container, environment: environment, service: service, user: user, kind: kind))
        default:
            throw .malformed("an unknown request")
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the request") }
        return request
    }
}

/// A fill asked of the agent: everything `coffer fill` would have used in its own process.
public struct FillAgentFill: Equatable, Sendable {
    /// The client's `cofferVersion`: an agent of another version declines (it may read the
    /// vault differently).
    public var version: String
    /// The container, as an absolute path the client resolved.
    public var container: String
    /// The client's values of the variables a fill reads (`environmentNames`), in that order.
    public var environment: [(String, String)]
    /// SERVICE as given (a domain or a URL), after a `TEAM:` prefix chose the container.
    public var service: String
    public var user: String?
    public var kind: AutoFillHost.FillKind

    /// What a fill reads from the environment: where device state and teams live, and the web
    /// quirks (§8.1.1). Nothing else of the client's environment reaches the agent.
    public static let environmentNames = ["HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "COFFER_WEB_QUIRKS"]

    public init(version: String = cofferVersion, container: String, environment: [(String, String)], service: String, user: String?, kind: AutoFillHost.FillKind) {
        self.version = version
        self.container = container
        self.environment = environment
        self.service = service
        self.user = user
        self.kind = kind
    }

    /// The client's values of `environmentNames` (those set).
    public static func environment(from environment: Environment) -> [(String, String)] {
        environmentNames.compactMap { name in environment[name].map { (name, $0) } }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.version == rhs.version && lhs.container == rhs.container && lhs.environment.elementsEqual(rhs.environment, by: ==)
            && lhs.service == rhs.service && lhs.user == rhs.user && lhs.kind == rhs.kind
    }
}

/// The agent's answer.
public enum FillAgentReply: Equatable, Sendable {
    /// The silent fill gave a password (with the identity it was provided for).
    case password(PasswordCredential, identity: PasswordCredentialIdentity?)
    /// The silent fill gave a one-time code.
    case code(OneTimeCodeCredential, identity: OneTimeCodeCredentialIdentity?)
    /// Nothing the agent may hand out (locked, no match, a choice to make, another version):
    /// the client runs the fill itself, with its own prompts and errors. `reason` is for logs.
    case declined(reason: String)
    /// The answer to `check`.
    case ok

    static let passwordType: UInt8 = 0, codeType: UInt8 = 1, declinedType: UInt8 = 2, okType: UInt8 = 3
    /// The longest answer a client reads.
    public static let maximumLength = 256 << 10

    /// The framed answer. It may hold a password: the caller wipes it once sent.
    public var encoded: [UInt8] {
        var writer = SSHWireWriter()
        switch self {
        case .ok:
            writer.byte(Self.okType)
        case .declined(let reason):
            writer.byte(Self.declinedType)
            writer.string(reason)
        case .password(let credential, let identity):
            writer.byte(Self.passwordType)
            writer.string(credential.user)
            writer.string(credential.password)
            writer.byte(identity == nil ? 0 : 1)
            if let identity {
                Self.write(identity.serviceIdentifier, to: &writer)
                writer.string(identity.user)
                writer.string(identity.recordIdentifier)
                writer.uint32(UInt32(bitPattern: Int32(clamping: identity.rank)))
            }
        case .code(let credential, let identity):
            writer.byte(Self.codeType)
            writer.string(credential.code)
            writer.byte(identity == nil ? 0 : 1)
            if let identity {
                Self.write(identity.serviceIdentifier, to: &writer)
                writer.string(identity.label)
                writer.string(identity.recordIdentifier)
                writer.uint32(UInt32(bitPattern: Int32(clamping: identity.rank)))
            }
        }
        let framed = FramedSocketServer.frame(writer.bytes)
        writer.wipe()
        return framed
    }

    /// The answer for what a silent fill gave, or `nil` when it filled nothing.
    public init?(_ result: AutoFillHost.Result) {
        switch result {
        case .filled(let credential, let identity): self = .password(credential, identity: identity)
        case .filledCode(let credential, let identity): self = .code(credential, identity: identity)
        case .cancelled, .noMatch, .choiceRequired: return nil
        }
    }

    /// What the client does with it: a filled result, or `nil` (declined: fill directly).
    public var result: AutoFillHost.Result? {
        switch self {
        case .password(let credential, let identity): .filled(credential, identity: identity)
        case .code(let credential, let identity): .filledCode(credential, identity: identity)
        case .declined, .ok: nil
        }
    }

    public init(_ body: [UInt8]) throws {
        self = try body.withUnsafeBytes { try Self.decode($0) }
    }

    private static func decode(_ buffer: UnsafeRawBufferPointer) throws(SSHWireError) -> FillAgentReply {
        var reader = SSHWireReader(buffer)
        let reply: FillAgentReply
        switch try reader.byte() {
        case Self.okType:
            reply = .ok
        case Self.declinedType:
            reply = .declined(reason: try reader.text())
        case Self.passwordType:
            let credential = PasswordCredential(user: try reader.text(), password: try reader.text())
            var identity: PasswordCredentialIdentity?
            if try Self.flag(&reader) {
                identity = PasswordCredentialIdentity(
                    serviceIdentifier: try Self.service(&reader), user: try reader.text(), recordIdentifier: try reader.text(),
                    rank: Int(Int32(bitPattern: try reader.uint32())))
            }
            reply = .password(credential, identity: identity)
        case Self.codeType:
            let credential = OneTimeCodeCredential(code: try reader.text())
            var identity: OneTimeCodeCredentialIdentity?
            if try Self.flag(&reader) {
                identity = OneTimeCodeCredentialIdentity(
                    serviceIdentifier: try Self.service(&reader), label: try reader.text(), recordIdentifier: try reader.text(),
                    rank: Int(Int32(bitPattern: try reader.uint32())))
            }
            reply = .code(credential, identity: identity)
        default:
            throw .malformed("an unknown answer")
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the answer") }
        return reply
    }

    private static func write(_ service: CredentialServiceIdentifier, to writer: inout SSHWireWriter) {
        writer.string(service.identifier)
        writer.byte(service.type == .URL ? 1 : 0)
    }

    private static func service(_ reader: inout SSHWireReader) throws(SSHWireError) -> CredentialServiceIdentifier {
        let identifier = try reader.text()
        switch try reader.byte() {
        case 0: return CredentialServiceIdentifier(identifier: identifier, type: .domain)
        case 1: return CredentialServiceIdentifier(identifier: identifier, type: .URL)
        default: throw .malformed("an unknown service identifier type")
        }
    }

    private static func flag(_ reader: inout SSHWireReader) throws(SSHWireError) -> Bool {
        switch try reader.byte() {
        case 0: return false
        case 1: return true
        default: throw .malformed("a malformed flag")
        }
    }
}
