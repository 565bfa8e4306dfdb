import CofferSupport
import CofferModel

/// The byte of each match mode in an identity entry of the index.
extension MatchMode {
    /// The byte an identity entry stores (SPEC.md §7.3); `host` is 0, so a zeroed field is the default.
    package var indexByte: UInt8 {
        switch self {
        case .host: 0
        case .site: 1
        case .exact: 2
        case .never: 3
        }
    }

    /// A switch, not a search of `allCases`: that builds an array on every call, and a listing
    /// reads a million of these.
    package init?(indexByte: UInt8) {
        switch indexByte {
        case 0: self = .host
        case 1: self = .site
        case 2: self = .exact
        case 3: self = .never
        default: return nil
        }
    }
}

/// A service identifier taken apart for matching (SPEC.md §8.1): what the index stores beside
/// each identity (§7.3) so that a lookup compares bytes and parses only the request.
///
/// Pure data: `ServiceMatching` computes it (it needs libidn2 and libpsl), the index encodes it.
public struct ServiceKey: Equatable, Sendable {
    /// The registrable domain (eTLD+1) of `host`, or the host itself when it has none (an IP
    /// literal, `localhost`, a public suffix); the lower-cased identifier when it did not parse.
    public var site: String
    /// The canonical host (IDNA A-labels, lower case, no trailing dot); empty when the identifier
    /// did not parse, which matches nothing.
    public var host: String
    /// Lower-cased scheme of a `.URL` identifier; empty for a `.domain`.
    public var scheme: String
    /// The port written in the identifier; 0 when none was.
    public var port: UInt16
    /// The URL's path (`/` when empty, and for a `.domain`).
    public var path: String

    public init(site: String, host: String, scheme: String, port: UInt16, path: String) {
        self.site = site
        self.host = host
        self.scheme = scheme
        self.port = port
        self.path = path
    }

    /// A key that matches nothing, filed under `site`.
    public static func unparsed(site: String) -> ServiceKey {
        ServiceKey(site: site, host: "", scheme: "", port: 0, path: "/")
    }

    public var isParsed: Bool { !host.isEmpty }

    /// The name whose keyed hash picks the bucket within its site's region (SPEC.md §7.3).
    package var filingHost: String { host.isEmpty ? site : host }
}
