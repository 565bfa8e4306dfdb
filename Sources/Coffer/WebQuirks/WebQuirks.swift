import FoundationEssentials
import Glibc

/// Apple's Password Manager Resources (`quirks/*.json`, MIT licence), as published, shipped
/// with Coffer in `share/coffer/web-quirks/` (SPEC.md §12.1): what the web's sites need that
/// their pages do not say. Read on demand, never on `fill`'s path.
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
        return candidates.first { access($0 + "/password-rules.json", R_OK) == 0 }.map(WebQuirks.init(directory:))
    }

    /// The rule published for `host` (a canonical host): the entry for the host itself, else
    /// for its nearest parent domain whose entry is not `exact-domain-match-only`.
    public func passwordRules(forHost host: String) throws -> (domain: String, rules: String)? {
        guard case .object(let table) = try document("password-rules.json") else { throw malformed("password-rules.json") }
        var domain = host
        while true {
            if let entry = table[domain]?.objectValue, let rules = entry["password-rules"]?.stringValue {
                if domain == host || entry["exact-domain-match-only"]?.boolValue != true { return (domain, rules) }
            }
            guard let dot = domain.firstIndex(of: ".") else { return nil }
            domain = String(domain[domain.index(after: dot)...])
        }
    }

    private func document(_ name: String) throws -> JSONValue {
        let path = directory + "/" + name
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw VaultError.invalidInput("cannot read \(path)")
        }
        do { return try JSONValue.parse(Array(bytes)) } catch { throw malformed(name) }
    }

    private func malformed(_ name: String) -> VaultError { .invalidInput("\(directory)/\(name) is not the published format") }
}
