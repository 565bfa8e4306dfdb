import CofferStore
import CofferFormat
import FoundationEssentials

/// Apple's Password Manager Resources (`quirks/*.json`, MIT licence), as published, shipped
/// with Coffer in `share/coffer/web-quirks/` (SPEC.md §12.1): what the web's sites need that
/// their pages do not say. Read on demand: a fill that finds the host's own login never reads it.
public struct WebQuirks: Sendable {
    /// The directory holding `password-rules.json` and its siblings.
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// The data installed with this executable: `$COFFER_WEB_QUIRKS` when set, else
    /// `../share/coffer/web-quirks` beside the executable (an installed prefix), else the
    /// source tree's `Data/web-quirks` above it (a build), else the system's copy.
    public static func installed(environment: Environment) -> WebQuirks? {
        var candidates: [String] = []
        if let chosen = environment["COFFER_WEB_QUIRKS"], !chosen.isEmpty { candidates.append(chosen) }
        if let executable = OwnExecutable.path {
            var directory = FileSystem.parentDirectory(of: executable)
            candidates.append(FileSystem.parentDirectory(of: directory) + "/share/coffer/web-quirks")
            for _ in 0..<5 where directory != "/" {
                directory = FileSystem.parentDirectory(of: directory)
                candidates.append(directory + "/Data/web-quirks")
            }
        }
        candidates += ["/usr/local/share/coffer/web-quirks", "/usr/share/coffer/web-quirks"]
        return candidates.first { FileSystem.isReadable($0 + "/password-rules.json") }.map(WebQuirks.init(directory:))
    }

    /// The rule published for `host` (a canonical host): the entry for the host itself, else
    /// for its nearest parent domain whose entry is not `exact-domain-match-only`.
    public func passwordRules(forHost host: String) throws(WebQuirksError) -> (domain: String, rules: String)? {
        guard case .object(let table) = try document("password-rules.json") else {
            throw .malformed(file: "password-rules.json", reason: "not a JSON object")
        }
        for domain in SharedCredentials.domainsCovering(host) {
            if let entry = table[domain]?.objectValue, let rules = entry["password-rules"]?.stringValue {
                if domain == host || entry["exact-domain-match-only"]?.boolValue != true { return (domain, rules) }
            }
        }
        return nil
    }

    /// The sites that share their accounts today (`shared-credentials.json`): what suggests a
    /// login saved for one on the others (SPEC.md §8.1.1).
    public func sharedCredentials() throws(WebQuirksError) -> SharedCredentials {
        try SharedCredentials(parsing: bytes("shared-credentials.json"), file: "shared-credentials.json")
    }

    /// The sites that once shared their accounts (`shared-credentials-historical.json`) together
    /// with today's: what keeps `audit` from calling such logins reused.
    public func everSharedCredentials() throws(WebQuirksError) -> [SharedCredentials] {
        [try sharedCredentials(),
         try SharedCredentials(parsing: bytes("shared-credentials-historical.json"), file: "shared-credentials-historical.json")]
    }

    /// The published change-password pages (`change-password-URLs.json`), read once for as
    /// many lookups as an audit makes.
    public func changePasswordPages() throws(WebQuirksError) -> ChangePasswordPages {
        guard case .object(let table) = try document("change-password-URLs.json") else {
            throw .malformed(file: "change-password-URLs.json", reason: "not a JSON object")
        }
        return ChangePasswordPages(table: table)
    }

    /// `https://HOST/.well-known/change-password`: what a site without a published page offers.
    static func wellKnownChangePasswordURL(forHost host: String) -> String {
        "https://\(host.contains(":") ? "[\(host)]" : host)/.well-known/change-password"
    }

    /// Whether `host` asks people to type a one-time code after their password (so a submitted
    /// password that is the stored one followed by digits is no new password).
    public func appendsCodeToPassword(host: String) throws(WebQuirksError) -> Bool {
        try domains("websites-that-append-2fa-to-password.json").contains { SharedCredentials.covers($0, host) }
    }

    /// Whether `host`, embedded in another site's page, asks for *other* services' credentials
    /// (a payment processor asking for bank logins): nothing typed there is its own login.
    public func asksForOtherServicesWhenEmbedded(host: String) throws(WebQuirksError) -> Bool {
        try domains("websites-that-ask-for-credentials-for-other-services-when-embedded-as-third-party.json")
            .contains { SharedCredentials.covers($0, host) }
    }

    private func domains(_ name: String) throws(WebQuirksError) -> [String] {
        guard case .array(let items) = try document(name) else { throw .malformed(file: name, reason: "not a JSON array") }
        var domains: [String] = []
        for item in items {
            guard let text = item.stringValue, let host = HostNames.canonicalHost(text) else {
                throw .malformed(file: name, reason: "an entry is not a domain")
            }
            domains.append(host)
        }
        return domains
    }

    private func document(_ name: String) throws(WebQuirksError) -> JSONValue {
        let data = try bytes(name)
        do { return try JSONValue.parse(data) } catch { throw .malformed(file: name, reason: "\(error)") }
    }

    private func bytes(_ name: String) throws(WebQuirksError) -> [UInt8] {
        let path = directory + "/" + name
        guard let bytes = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        return Array(bytes)
    }
}

/// Where passwords are changed (SPEC.md §12.2): the published page for a host or its nearest
/// parent domain, else the host's well-known change-password URL (W3C "A Well-Known URL for
/// Changing Passwords").
public struct ChangePasswordPages: Sendable {
    let table: JSONObject

    /// No published pages: every host gets its well-known URL.
    public static let wellKnownOnly = ChangePasswordPages(table: [:])

    public func url(forHost host: String) -> String {
        for domain in SharedCredentials.domainsCovering(host) {
            if let url = table[domain]?.stringValue, url.hasPrefix("https://") || url.hasPrefix("http://") { return url }
        }
        return WebQuirks.wellKnownChangePasswordURL(forHost: host)
    }
}
