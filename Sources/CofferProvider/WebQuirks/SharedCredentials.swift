import CofferStore
import CofferFormat
/// Which sites share one account (SPEC.md §8.1.1): Apple's `shared-credentials.json` (or its
/// `-historical` sibling), indexed once. A `shared` group's domains all share; a `from` → `to`
/// relation lets a login saved for a `from` domain be offered on a `to` domain, not the reverse
/// (`discordapp.com`'s login on `discord.com`); `fromDomainsAreObsoleted` says the `from`
/// domains are gone (the site moved).
///
/// A domain covers itself and its subdomains, as in the rest of the data. The data's own terms
/// make every such match a *suggestion* labelled with the site it was saved for, never a fill
/// without a choice.
public struct SharedCredentials: Sendable {
    /// A domain whose logins may be offered on the host asked about.
    public struct Source: Equatable, Sendable {
        public let domain: String
        /// The relation says this domain is obsolete: the site moved to the host's domain.
        public let obsoleted: Bool
    }

    private struct Relation: Sendable {
        let from: [String]
        let to: [String]
        let obsoleted: Bool
    }

    private let relations: [Relation]
    /// Target domain → the relations in which it is a target.
    private let byTarget: [String: [Int]]

    /// Parses the published format: an array of `{"shared": [...]}` or `{"from": [...], "to":
    /// [...], "fromDomainsAreObsoleted": bool}` objects. Anything else is refused whole.
    public init(parsing bytes: [UInt8], file: String = "shared-credentials.json") throws(WebQuirksError) {
        guard case .array(let entries)? = try? JSONValue.parse(bytes) else { throw .malformed(file: file, reason: "not a JSON array") }
        var relations: [Relation] = []
        var byTarget: [String: [Int]] = [:]
        for entry in entries {
            guard let object = entry.objectValue else { throw .malformed(file: file, reason: "an entry is not an object") }
            let relation: Relation
            if let shared = object["shared"] {
                let members = try Self.domains(shared, file)
                relation = Relation(from: members, to: members, obsoleted: false)
            } else if let from = object["from"], let to = object["to"] {
                relation = Relation(
                    from: try Self.domains(from, file), to: try Self.domains(to, file), obsoleted: object["fromDomainsAreObsoleted"]?.boolValue == true)
            } else {
                throw .malformed(file: file, reason: "an entry has neither 'shared' nor 'from' and 'to'")
            }
            for target in relation.to { byTarget[target, default: []].append(relations.count) }
            relations.append(relation)
        }
        self.relations = relations
        self.byTarget = byTarget
    }

    /// The domains whose logins may be suggested on `host` (a canonical host), nearest relation
    /// first, without `host`'s own domain and without repeats.
    public func sources(forHost host: String) -> [Source] {
        var found: [Source] = []
        for domain in Self.domainsCovering(host) {
            for index in byTarget[domain] ?? [] {
                let relation = relations[index]
                for source in relation.from where source != domain && !Self.covers(source, host)
                    && !found.contains(where: { $0.domain == source }) {
                    found.append(Source(domain: source, obsoleted: relation.obsoleted))
                }
            }
        }
        return found
    }

    /// Whether a login for `a` and one for `b` may be the same account: a relation in either
    /// direction covers both (what keeps `audit` from calling them reused).
    public func relates(_ a: String, _ b: String) -> Bool {
        sources(forHost: a).contains { Self.covers($0.domain, b) } || sources(forHost: b).contains { Self.covers($0.domain, a) }
    }

    /// Whether `domain` covers `host`: the same name, or a subdomain of it.
    public static func covers(_ domain: String, _ host: String) -> Bool {
        host == domain || (host.utf8.count > domain.utf8.count && host.hasSuffix("." + domain))
    }

    /// `host` and each of its parent domains, nearest first (`a.b.c`, `b.c`, `c`).
    static func domainsCovering(_ host: String) -> [String] {
        var domains = [host]
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(String(rest)) }
        }
        return domains
    }

    private static func domains(_ value: JSONValue, _ file: String) throws(WebQuirksError) -> [String] {
        guard let array = value.arrayValue else { throw .malformed(file: file, reason: "a domain list is not an array") }
        var domains: [String] = []
        for item in array {
            guard let text = item.stringValue, let host = HostNames.canonicalHost(text) else {
                throw .malformed(file: file, reason: "'\(item.stringValue?.prefix(80) ?? "?")' is not a domain")
            }
            domains.append(host)
        }
        return domains
    }
}
