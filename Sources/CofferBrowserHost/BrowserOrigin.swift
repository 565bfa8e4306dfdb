import CofferProvider
import CofferHostKit

/// The origin of the frame a request is about, as the extension's service worker took it from
/// the browser (`sender.origin`), never from the page: `scheme://host[:port]`, scheme http or
/// https, nothing else (SPEC.md §13.3).
public struct BrowserOrigin: Equatable, Sendable {
    public let scheme: String
    public let host: String
    public let port: UInt16?

    public init(parsing text: String) throws(BrowserHostError) {
        guard text.utf8.count <= 2048 else { throw .badRequest("origin too long") }
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, ["https", "http"].contains(parts[0]) else { throw .badRequest("origin must be http(s)://host[:port]") }
        var rest = Substring(parts[1])
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains(where: { "/?#@\\ ".contains($0) }) else {
            throw .badRequest("origin must be http(s)://host[:port], without path or user")
        }
        var port: UInt16?
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            guard let number = UInt16(rest[rest.index(after: colon)...]), number > 0 else { throw .badRequest("origin port") }
            port = number
            rest = rest[..<colon]
        }
        guard HostNames.canonicalHost(String(rest)) != nil else { throw .badRequest("origin host") }
        scheme = String(parts[0])
        host = String(rest)
        self.port = port
    }

    public var isSecure: Bool { scheme == "https" }

    /// A page that may use passkeys, cards and addresses: `https`, or `http://localhost` (a
    /// developer's own machine), as browsers' secure contexts are.
    public var isSecureContext: Bool { isSecure || host == "localhost" }

    /// The service identifier the provider matches: the origin as a URL.
    public var serviceIdentifier: CredentialServiceIdentifier {
        CredentialServiceIdentifier(identifier: "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")/", type: .URL)
    }
}
