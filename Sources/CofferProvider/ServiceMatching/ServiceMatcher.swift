import CofferStore
import CofferFormat
import FoundationEssentials

/// How closely a stored identity matches a requested service, most specific highest (SPEC.md §8.1).
public enum MatchLevel: Int, Comparable, Sendable, CustomStringConvertible {
    /// Another site that shares its accounts with the requested one (SPEC.md §8.1.1):
    /// `airbnb.com`'s login on `airbnb.co.uk`. Always a suggestion, never filled unasked.
    case sharedCredential = 1
    /// Same registrable domain (eTLD+1): `login.example.com` for `www.example.com`.
    case registrableDomain = 2
    /// Same host name.
    case host = 3
    /// The same URL: scheme, host, port and path.
    case exactURL = 4

    public static func < (lhs: MatchLevel, rhs: MatchLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .sharedCredential: "shared-credential"
        case .registrableDomain: "registrable-domain"
        case .host: "host"
        case .exactURL: "exact-url"
        }
    }
}

extension ServiceKey {
    /// The port written in the identifier, else the scheme's default (http 80, https 443, ssh
    /// 22, ftp 21); `nil` when neither says.
    var effectivePort: UInt16? {
        var scheme = scheme
        return scheme.withUTF8 { ServiceKeyBytes.effectivePort(port: port, scheme: $0) }
    }

    /// Runs `body` with the key's parts as bytes (what the matcher compares).
    func withBytes<Result>(_ body: (ServiceKeyBytes) -> Result) -> Result {
        var (site, host, scheme, path) = (site, host, scheme, path)
        return site.withUTF8 { site in
            host.withUTF8 { host in
                scheme.withUTF8 { scheme in
                    path.withUTF8 { path in body(ServiceKeyBytes(site: site, host: host, scheme: scheme, path: path, port: port)) }
                }
            }
        }
    }
}

/// A service key's parts as UTF-8 bytes, wherever they are: a parsed request's strings, or an
/// identity bucket entry's fields in a decrypted payload (compared there without copying).
struct ServiceKeyBytes {
    var site: UnsafeBufferPointer<UInt8>
    var host: UnsafeBufferPointer<UInt8>
    var scheme: UnsafeBufferPointer<UInt8>
    var path: UnsafeBufferPointer<UInt8>
    var port: UInt16

    var isParsed: Bool { !host.isEmpty }

    static func effectivePort(port: UInt16, scheme: UnsafeBufferPointer<UInt8>) -> UInt16? {
        if port != 0 { return port }
        if equal(scheme, "https") { return 443 }
        if equal(scheme, "http") { return 80 }
        if equal(scheme, "ssh") { return 22 }
        if equal(scheme, "ftp") { return 21 }
        return nil
    }

    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.hasSameBytes(as: b)
    }

    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        equal(a, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

/// Decides whether, and how well, stored identities match a request (SPEC.md §8.1).
public enum ServiceMatcher {
    /// The registrable domain (or host) an identity is filed under; `nil` if unparseable.
    public static func site(of service: CredentialServiceIdentifier) -> String? {
        let key = ServiceKey(parsing: service)
        return key.isParsed ? key.site : nil
    }

    /// How `identity` matches `request`, or `nil` when it must not be offered.
    ///
    /// Scheme rule: a URL identity is never offered to a request with a weaker or different
    /// scheme (an `https` login is not sent to an `http` page); an `http` identity may serve
    /// `https`. Domain identities and domain requests carry no scheme and match any.
    public static func matchLevel(identity: CredentialServiceIdentifier, request: CredentialServiceIdentifier) -> MatchLevel? {
        matchLevel(ServiceKey(parsing: identity), ServiceKey(parsing: request))
    }

    static func matchLevel(_ stored: ServiceKey, _ wanted: ServiceKey) -> MatchLevel? {
        stored.withBytes { stored in wanted.withBytes { wanted in matchLevel(stored, wanted) } }
    }

    /// The one implementation of the rules above, on bytes: a lookup compares an entry's stored
    /// key where it lies in the decrypted bucket.
    static func matchLevel(_ stored: ServiceKeyBytes, _ wanted: ServiceKeyBytes) -> MatchLevel? {
        guard stored.isParsed, wanted.isParsed else { return nil }
        if !stored.scheme.isEmpty, !wanted.scheme.isEmpty, !ServiceKeyBytes.equal(stored.scheme, wanted.scheme),
           !(ServiceKeyBytes.equal(stored.scheme, "http") && ServiceKeyBytes.equal(wanted.scheme, "https")) {
            return nil
        }
        // Ports matter once either side names one: then explicit or default ports must agree.
        if stored.port != 0 || wanted.port != 0,
           let have = ServiceKeyBytes.effectivePort(port: stored.port, scheme: stored.scheme),
           let want = ServiceKeyBytes.effectivePort(port: wanted.port, scheme: wanted.scheme), have != want {
            return nil
        }
        guard ServiceKeyBytes.equal(stored.site, wanted.site) else { return nil }
        if !ServiceKeyBytes.equal(stored.host, wanted.host) { return .registrableDomain }
        if !stored.scheme.isEmpty, ServiceKeyBytes.equal(stored.scheme, wanted.scheme), ServiceKeyBytes.equal(stored.path, wanted.path) {
            return .exactURL
        }
        return .host
    }

    /// One identity's best match against a request list.
    public struct Match: Sendable {
        public let level: MatchLevel
        /// Index of the request service identifier it matched (0 = most specific).
        public let requestIndex: Int
    }

    /// The best match of `identity` over `request`: highest level, then earliest request entry.
    static func bestMatch(of stored: ServiceKey, in request: [ServiceKey]) -> Match? {
        stored.withBytes { stored in
            var best: Match?
            for (index, wanted) in request.enumerated() {
                guard let level = wanted.withBytes({ matchLevel(stored, $0) }) else { continue }
                if best == nil || level > best!.level { best = Match(level: level, requestIndex: index) }
            }
            return best
        }
    }

    /// What orders suggestions (SPEC.md §8.1): match level, then earlier request entry, then
    /// `rank` (higher first), then most recently used, then record id for a stable order.
    /// Small integers only: comparing the structs themselves (strings and all) made listing
    /// 10,000 identities spend most of its time sorting.
    struct RankingKey {
        let level: Int, requestIndex: Int, rank: Int64, lastUsed: UInt64, id: IdentifierWords

        /// An identity offered without a request (the whole list).
        init(unmatchedRank rank: Int64, lastUsed: UInt64, id: IdentifierWords) {
            self.init(level: 0, requestIndex: 0, rank: rank, lastUsed: lastUsed, id: id)
        }

        init(level: Int, requestIndex: Int, rank: Int64, lastUsed: UInt64, id: IdentifierWords) {
            (self.level, self.requestIndex, self.rank, self.lastUsed, self.id) = (level, requestIndex, rank, lastUsed, id)
        }

        func precedes(_ other: RankingKey) -> Bool {
            if level != other.level { return level > other.level }
            if requestIndex != other.requestIndex { return requestIndex < other.requestIndex }
            if rank != other.rank { return rank > other.rank }
            if lastUsed != other.lastUsed { return lastUsed > other.lastUsed }
            return id < other.id
        }
    }

    /// Orders matched identities by `RankingKey`.
    public static func ordered(_ candidates: [RankedIdentity]) -> [RankedIdentity] {
        var keys: [(key: RankingKey, index: Int)] = []
        keys.reserveCapacity(candidates.count)
        for (index, candidate) in candidates.enumerated() {
            let key = RankingKey(level: candidate.match?.level.rawValue ?? 0, requestIndex: candidate.match?.requestIndex ?? 0,
                                 rank: Int64(candidate.identity.rank), lastUsed: candidate.lastUsed, id: candidate.tieBreak)
            keys.append((key, index))
        }
        keys.sort { $0.key.precedes($1.key) }
        return keys.map { candidates[$0.index] }
    }
}

/// An identity that matched a request, with what the ranking and the provision rule need.
public struct RankedIdentity: Sendable {
    public let identity: PasswordCredentialIdentity
    /// `nil` when the request named no service (the whole list is offered).
    public let match: ServiceMatcher.Match?
    /// Unix seconds of the last fill on this device; 0 if never.
    public let lastUsed: UInt64
    /// The record's match mode, as the index holds it.
    public let mode: MatchMode
    /// The final tie-break; kept as words so that sorting never parses `recordIdentifier`.
    let tieBreak: IdentifierWords

    init(identity: PasswordCredentialIdentity, match: ServiceMatcher.Match?, lastUsed: UInt64, mode: MatchMode, tieBreak: IdentifierWords) {
        self.identity = identity
        self.match = match
        self.lastUsed = lastUsed
        self.mode = mode
        self.tieBreak = tieBreak
    }

    public init(identity: PasswordCredentialIdentity, match: ServiceMatcher.Match?, lastUsed: UInt64, mode: MatchMode = .host) {
        self.init(
            identity: identity, match: match, lastUsed: lastUsed, mode: mode,
            tieBreak: (try? RecordID(hex: identity.recordIdentifier))?.words ?? IdentifierWords(high: .max, low: .max))
    }

    /// The provision rule (SPEC.md §8.1): whether a host may release this identity's password
    /// without a person choosing it. Only a match at or above the record's mode threshold may;
    /// any other match is a suggestion a person must pick.
    public var allowsAutomaticFill: Bool {
        guard let level = match?.level, let threshold = mode.automaticFillLevel else { return false }
        return level >= threshold
    }
}

extension MatchMode {
    /// The lowest match level at which a record of this mode may be filled without a person
    /// choosing it; `nil` for `never`.
    public var automaticFillLevel: MatchLevel? {
        switch self {
        case .site: .registrableDomain
        case .host: .host
        case .exact: .exactURL
        case .never: nil
        }
    }
}
