import FoundationEssentials

/// How closely a stored identity matches a requested service, most specific highest (SPEC.md §7.1).
public enum MatchLevel: Int, Comparable, Sendable, CustomStringConvertible {
    /// Same registrable domain (eTLD+1): `login.example.com` for `www.example.com`.
    case registrableDomain = 1
    /// Same host name.
    case host = 2
    /// The same URL: scheme, host, port and path.
    case exactURL = 3

    public static func < (lhs: MatchLevel, rhs: MatchLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .registrableDomain: "registrable-domain"
        case .host: "host"
        case .exactURL: "exact-url"
        }
    }
}

/// A service identifier taken apart for matching.
struct ParsedService: Equatable {
    /// `nil` for a `.domain` identifier.
    let scheme: String?
    let host: String
    /// The port written in the identifier, if any.
    let explicitPort: Int?
    let path: String
    /// eTLD+1, or the host itself when it has none (an IP literal, `localhost`).
    let site: String

    init?(_ service: CredentialServiceIdentifier) {
        switch service.type {
        case .URL:
            guard let components = URLComponents(string: service.identifier), let scheme = components.scheme?.lowercased(),
                  let rawHost = components.host, let host = DomainNames.canonicalHost(rawHost)
            else { return nil }
            self.scheme = scheme
            self.host = host
            explicitPort = components.port
            path = components.path.isEmpty ? "/" : components.path
        case .domain:
            var text = service.identifier
            var port: Int?
            if text.utf8.contains(UInt8(ascii: ":")), !text.hasPrefix("["), let colon = text.lastIndex(of: ":"),
               let number = Int(text[text.index(after: colon)...]) {
                port = number
                text = String(text[..<colon])
            }
            guard let host = DomainNames.canonicalHost(text) else { return nil }
            scheme = nil
            self.host = host
            explicitPort = port
            path = "/"
        }
        site = DomainNames.registrableDomain(ofCanonicalHost: host) ?? host
    }

    static let defaultPorts = ["http": 80, "https": 443, "ssh": 22, "ftp": 21]

    /// The explicit port, else the scheme's default.
    var effectivePort: Int? { explicitPort ?? scheme.flatMap { Self.defaultPorts[$0] } }
}

/// Decides whether, and how well, stored identities match a request (SPEC.md §7.1).
public enum ServiceMatcher {
    /// The registrable domain (or host) an identity is filed under; `nil` if unparseable.
    public static func site(of service: CredentialServiceIdentifier) -> String? {
        ParsedService(service)?.site
    }

    /// How `identity` matches `request`, or `nil` when it must not be offered.
    ///
    /// Scheme rule: a URL identity is never offered to a request with a weaker or different
    /// scheme (an `https` login is not sent to an `http` page); an `http` identity may serve
    /// `https`. Domain identities and domain requests carry no scheme and match any.
    public static func matchLevel(identity: CredentialServiceIdentifier, request: CredentialServiceIdentifier) -> MatchLevel? {
        guard let stored = ParsedService(identity), let wanted = ParsedService(request) else { return nil }
        return matchLevel(stored, wanted)
    }

    static func matchLevel(_ stored: ParsedService, _ wanted: ParsedService) -> MatchLevel? {
        if let have = stored.scheme, let want = wanted.scheme, have != want, !(have == "http" && want == "https") {
            return nil
        }
        // Ports matter once either side names one: then explicit or default ports must agree.
        if stored.explicitPort != nil || wanted.explicitPort != nil,
           let have = stored.effectivePort, let want = wanted.effectivePort, have != want {
            return nil
        }
        guard stored.site == wanted.site else { return nil }
        if stored.host != wanted.host { return .registrableDomain }
        if stored.scheme != nil, stored.scheme == wanted.scheme, stored.path == wanted.path { return .exactURL }
        return .host
    }

    /// One identity's best match against a request list.
    public struct Match: Sendable {
        public let level: MatchLevel
        /// Index of the request service identifier it matched (0 = most specific).
        public let requestIndex: Int
    }

    /// The best match of `identity` over `request`: highest level, then earliest request entry.
    public static func bestMatch(of identity: CredentialServiceIdentifier, in request: [ParsedServiceList]) -> Match? {
        guard let stored = ParsedService(identity) else { return nil }
        var best: Match?
        for (index, wanted) in request.enumerated() {
            guard let wanted = wanted.parsed, let level = matchLevel(stored, wanted) else { continue }
            if best == nil || level > best!.level { best = Match(level: level, requestIndex: index) }
        }
        return best
    }

    /// What orders suggestions (SPEC.md §7.1): match level, then earlier request entry, then
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

/// A request's service identifiers, parsed once.
public struct ParsedServiceList: Sendable {
    let parsed: ParsedService?
    public init(_ service: CredentialServiceIdentifier) { parsed = ParsedService(service) }
}

extension ParsedService: @unchecked Sendable {}

/// An identity that matched a request, with what the ranking needs.
public struct RankedIdentity: Sendable {
    public let identity: PasswordCredentialIdentity
    /// `nil` when the request named no service (the whole list is offered).
    public let match: ServiceMatcher.Match?
    /// Unix seconds of the last fill on this device; 0 if never.
    public let lastUsed: UInt64
    /// The final tie-break; kept as words so that sorting never parses `recordIdentifier`.
    let tieBreak: IdentifierWords

    init(entry: IdentityEntry, match: ServiceMatcher.Match?, lastUsed: UInt64) {
        self.identity = entry.identity
        self.match = match
        self.lastUsed = lastUsed
        self.tieBreak = entry.recordID.words
    }

    init(identity: PasswordCredentialIdentity, match: ServiceMatcher.Match?, lastUsed: UInt64, tieBreak: IdentifierWords) {
        self.identity = identity
        self.match = match
        self.lastUsed = lastUsed
        self.tieBreak = tieBreak
    }

    public init(identity: PasswordCredentialIdentity, match: ServiceMatcher.Match?, lastUsed: UInt64) {
        self.identity = identity
        self.match = match
        self.lastUsed = lastUsed
        self.tieBreak = (try? RecordID(hex: identity.recordIdentifier))?.words ?? IdentifierWords(high: .max, low: .max)
    }
}

extension Array where Element == RankedIdentity {
    /// The first identity of each record, in order: a record listing several matching services
    /// is offered once, at its best match. Sorting positions by record keeps this
    /// O(n log n) for a site with thousands of accounts, without a hash table.
    func firstPerRecord() -> [RankedIdentity] {
        let byRecord = indices.sorted {
            (self[$0].identity.recordIdentifier, $0) < (self[$1].identity.recordIdentifier, $1)
        }
        var keep = [Bool](repeating: false, count: count)
        for (position, index) in byRecord.enumerated()
        where position == 0 || self[byRecord[position - 1]].identity.recordIdentifier != self[index].identity.recordIdentifier {
            keep[index] = true
        }
        return indices.filter { keep[$0] }.map { self[$0] }
    }
}
