import CofferStore
import CofferFormat
/// What a host's own protocol adds to the matching of SPEC.md §8.1 before it fills anything
/// (§12): git and docker name their servers more strictly than a web page does.
public enum ServiceMatchingRules: Sendable {
    /// The rules of §8.1 alone: a browser, `coffer fill`, an embedding app.
    case web
    /// gitcredentials(7): protocol and host (with port) must agree, and when git sends a path
    /// (`credential.useHttpPath`) the stored URL's path must equal it. A `.domain` identity names
    /// no protocol or path and agrees with any protocol, but not with a request that has a path.
    case git
    /// docker-credential-helpers: the registry's host and port exactly (no port means 443, the
    /// registry default); the path is not compared.
    case docker

    /// Whether an identity stored as `stored`, which already matched `request` at host level or
    /// better, is one this protocol may hand out.
    public func admits(_ stored: ServiceKey, for request: ServiceKey) -> Bool {
        guard stored.isParsed, request.isParsed, stored.host == request.host else { return false }
        switch self {
        case .web:
            return true
        case .git:
            if !stored.scheme.isEmpty, !request.scheme.isEmpty, stored.scheme != request.scheme { return false }
            if stored.port != request.port, stored.effectivePort != request.effectivePort { return false }
            return request.path == "/" || (stored.scheme == request.scheme && stored.path == request.path)
        case .docker:
            let registryDefault: UInt16 = 443
            return (stored.effectivePort ?? registryDefault) == (request.effectivePort ?? registryDefault)
        }
    }
}
