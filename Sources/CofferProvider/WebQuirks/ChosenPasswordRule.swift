import CofferStore
import CofferFormat
/// The rule a generated password for a page follows (SPEC.md §12.1): the page's own
/// `passwordrules`, else the rule published for its host, else none (the default generator).
/// A rule that is malformed or cannot be met is passed over with a warning, never an error: a
/// site's mistake must not stop a person from getting a password.
public struct ChosenPasswordRule: Sendable {
    public let rules: PasswordRules?
    /// `page`, the domain whose published rule it is, or `default`.
    public let source: String
    /// Why a rule was passed over; quotes no password.
    public let warnings: [String]

    public init(pageRules: String?, host: String?, quirks: WebQuirks?) {
        var warnings: [String] = []
        func usable(_ text: String, _ what: String) -> PasswordRules? {
            do {
                let rules = try PasswordRules(parsing: text)
                _ = try RuleGenerator(rules)
                return rules
            } catch {
                warnings.append("\(what) is unusable (\(error)); using the default")
                return nil
            }
        }
        if let pageRules, !pageRules.allSatisfy(\.isWhitespace), let rules = usable(pageRules, "the page's passwordrules") {
            self.init(rules: rules, source: "page", warnings: warnings)
            return
        }
        if let host, let quirks {
            do {
                if let (domain, text) = try quirks.passwordRules(forHost: host), let rules = usable(text, "the published rule for \(domain)") {
                    self.init(rules: rules, source: domain, warnings: warnings)
                    return
                }
            } catch {
                warnings.append("the web's password rules cannot be read (\(error)); using the default")
            }
        }
        self.init(rules: nil, source: "default", warnings: warnings)
    }

    private init(rules: PasswordRules?, source: String, warnings: [String]) {
        self.rules = rules
        self.source = source
        self.warnings = warnings
    }

    /// A password under the chosen rule, else the default generator's `length` characters.
    public func generate(length: Int = PasswordRules.preferredLength) throws -> PasswordGenerator.Generated {
        if let rules { return try rules.generate() }
        return try PasswordGenerator.characters(length: length)
    }
}
