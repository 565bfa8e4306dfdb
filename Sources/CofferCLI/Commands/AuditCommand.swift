import Coffer
import CofferTerminalKit
import FoundationEssentials

struct AuditCommand: Command {
    static let name = "audit"
    static let summary = "find weak, reused, old and breached passwords (never printing one)"
    static let usage = "audit [--max-age DAYS] [--hibp [--hibp-url URL] | --hibp-file FILE] [--json]"
    static let discussion = """
        Checks every login, yours and your teams': weak passwords (a zxcvbn estimate under 40 bits, knowing the item's
        user, site and name), reused ones (grouped by the items that share them), old ones (set
        more than --max-age days ago, default 365, from the password history), and logins on
        plain http:. --hibp also asks Have I Been Pwned's range API how often each password was
        seen in breaches, with k-anonymity: only the first 5 hex digits of its SHA-1 leave the
        machine (--hibp-url for a mirror); --hibp-file searches a downloaded, sorted SHA-1 list
        offline instead. Each finding names the page where that password is changed: the site's
        published page (Apple's change-password-URLs data), else its
        /.well-known/change-password. Logins on sites that share (or shared) their accounts, as
        airbnb.com and airbnb.co.uk do, are one account, not reuse. A team's login whose password
        a removed member could read is 'exposed' until it is changed; one whose site reported the
        password unused (it signs in with a passkey now) is 'unused'. Passwords are never printed.
        Exit 0 when nothing is found, 1 otherwise.
        """
    static let examples = ["coffer audit", "coffer audit --hibp", "coffer audit --hibp-file pwnedpasswords.txt --json"]
    static let options: [OptionSpec] = [
        .value("max-age", "days after which a password is old (default 365)"),
        .flag("hibp", "check breaches through the HIBP range API (k-anonymity)"),
        .value("hibp-url", "the range API's base URL (default https://api.pwnedpasswords.com)"),
        .value("hibp-file", "check breaches against a local sorted SHA-1 list instead"),
        .flag("json", "print {\"checked\", \"findings\": [{\"kind\", \"recordIdentifier\", \"title\", \"detail\", \"changePasswordURL\"}]}"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        guard let days = Int(context.arguments.value("max-age") ?? "365"), days > 0 else { throw UsageError("--max-age takes a number of days") }
        let personal = try context.unlockedVault()
        // One's teams too (SPEC.md §16.6): their titles start with TEAM:, and a password a
        // removed member could read is flagged until it is changed.
        var teams: [VaultAudit.Team] = []
        if let identity = try? personal.personalIdentity() {
            for team in context.teams(ownedBy: personal.container) {
                guard (try? team.vault.unlockTeam(identity: identity)) != nil, let members = try? team.vault.teamMembership(),
                      let stored = try? team.vault.allRecords()
                else { context.note("team '\(team.name)' is left out: it does not open"); continue }
                teams.append(VaultAudit.Team(name: team.name, records: stored, membership: members))
            }
        }
        let breaches: VaultAudit.BreachSource? = if let file = context.arguments.value("hibp-file") {
            .file(file)
        } else if context.arguments.has("hibp") || context.arguments.has("hibp-url") {
            .rangeAPI(base: context.arguments.value("hibp-url") ?? BreachCheck.defaultURL)
        } else {
            nil
        }
        let (audit, teamOf): (VaultAudit, [RecordID: String])
        do {
            (audit, teamOf) = try VaultAudit.ofVaults(
                own: try personal.allRecords(), teams: teams, maximumAge: TimeInterval(days) * 86_400,
                quirks: WebQuirks.installed(environment: context.io.environment), breaches: breaches, environment: context.io.environment)
        } catch {
            throw CLIError("\(error)", code: .temporaryFailure)
        }
        func title(_ finding: VaultAudit.Finding) -> String { teamOf[finding.recordID].map { $0 + ":" } .map { $0 + finding.title } ?? finding.title }
        if context.wantsJSON {
            context.print(JSONOutput.render([
                "checked": .integer(audit.checked), "breachCheck": .bool(breaches != nil),
                "findings": .array(audit.findings.map { finding in
                    ["kind": .string(finding.kind.rawValue), "recordIdentifier": .string(finding.recordID.hex), "title": .string(title(finding)),
                     "detail": .string(finding.detail), "changePasswordURL": finding.changePasswordURL.map { .string($0) } ?? .null]
                }),
            ]))
        } else if audit.findings.isEmpty {
            context.note("checked \(audit.checked) logins: nothing found" + (breaches == nil ? " (breaches not checked: --hibp)" : ""))
        } else {
            for finding in audit.findings {
                let change = finding.changePasswordURL.map { "\tchange at \($0)" } ?? ""
                // Names and details escaped one by one: a tab in a name cannot make a column.
                context.print("\(finding.kind.rawValue)\t\(DisplayText.escaped(title(finding)))\t\(DisplayText.escaped(finding.detail))"
                    + "\t\(finding.recordID.hex.prefix(8))\(change)")
            }
            context.note("checked \(audit.checked) logins: \(audit.findings.count) finding\(audit.findings.count == 1 ? "" : "s")")
        }
        return audit.findings.isEmpty ? .success : .failure
    }
}

extension CommandContext {
    /// `init` and `passwd` accept any master password, but say when one is easy to guess.
    func warnIfWeak(_ password: SecureBytes) {
        let strength = PasswordStrength(of: password.unsafeString())
        guard strength.bits < 50 else { return }
        note("warning: this master password is weak (about \(Int(strength.bits)) bits by zxcvbn); the vault is only as strong as it. A passphrase of five or more random words ('coffer generate --style words') is far stronger")
    }
}
