import Coffer
import CofferTerminalKit

struct FillCommand: Command {
    static let name = "fill"
    static let summary = "print the password for a service, as AutoFill would"
    static let usage = "fill SERVICE [--user USER] [--otp] [--json] [--no-interaction]"
    static let discussion = """
        Drives the credential provider exactly as iOS does: the best identity for SERVICE from
        the identity store, provided silently when the vault is unlocked (a 'coffer unlock'
        session counts), otherwise the interactive path asks for the master password on the
        terminal. With no terminal, or with --no-interaction, a locked vault exits 75 and prints
        nothing on stdout. --otp provides the login's one-time code instead of its password, under
        the same rules (iOS 18's one-time-code AutoFill).
        """
    static let examples = [
        "coffer fill github.com", "coffer fill https://mail.example.com/login --user bob --json",
        "coffer fill github.com --no-interaction || echo locked", "coffer fill github.com --otp --clip",
    ]
    static let options: [OptionSpec] = [
        .value("user", "only the identity with this user name"),
        .flag("otp", "the one-time code of the login instead of its password"),
        .flag("json", "print {\"user\", \"password\", \"recordIdentifier\", \"serviceIdentifier\"}"),
        .flag("clip", "copy the password to the clipboard (cleared after $COFFER_CLIP_TIME, default 45 s, unless replaced meanwhile)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = try context.positionals(1...1, names: "SERVICE")[0]
        let scoped = context.scoped(operand)
        let kind: AutoFillHost.FillKind = context.arguments.has("otp") ? .oneTimeCode : .password
        // Parsed only where this process needs it: a fill the agent answers never pages in the
        // string searching it takes (the agent parses SERVICE itself).
        lazy var service = CredentialServiceIdentifier(parsing: scoped)
        // The fill agent first (SPEC.md §8.5); it declines all that needs this process.
        var agent = FillAgentAccess(context)
        let result: AutoFillHost.Result
        if let answered = agent?.fill(scoped, kind: kind) {
            result = answered
        } else {
            let vault = try context.openVault()
            let interaction = CommandLineInteraction(context: context)
            // One AutoFill list: one's own logins, then one's teams' (a team's own has no teams).
            result = context.hostSession(of: vault, interaction: interaction).fill(
                from: vault, serviceIdentifiers: [service], user: context.arguments.value("user"), allowInteraction: interaction.isAvailable, kind: kind)
            agent?.startIfAbsent(after: result, unlocking: vault)
        }
        switch result {
        case .filled(let credential, let identity):
            if context.arguments.has("clip") {
                let delay = try Clipboard.copy(credential.password, io: context.io)
                context.note("copied the password for \(credential.user) to the clipboard; it is cleared in \(delay) s")
            } else if context.wantsJSON {
                var object: JSONObject = ["user": .string(credential.user), "password": .string(credential.password)]
                if let identity {
                    object["recordIdentifier"] = .string(identity.recordIdentifier)
                    object["serviceIdentifier"] = JSONOutput.service(identity.serviceIdentifier)
                }
                context.print(JSONOutput.render(.object(object)))
            } else {
                context.print(credential.password)
            }
            return .success
        case .filledCode(let credential, let identity):
            if context.arguments.has("clip") {
                let delay = try Clipboard.copy(credential.code, io: context.io)
                context.note("copied the one-time code for \(identity?.label ?? service.identifier) to the clipboard; it is cleared in \(delay) s")
            } else if context.wantsJSON {
                var object: JSONObject = ["code": .string(credential.code)]
                if let identity {
                    object["label"] = .string(identity.label)
                    object["recordIdentifier"] = .string(identity.recordIdentifier)
                    object["serviceIdentifier"] = JSONOutput.service(identity.serviceIdentifier)
                }
                context.print(JSONOutput.render(.object(object)))
            } else {
                context.print(credential.code)
            }
            return .success
        case .noMatch:
            let what = kind == .oneTimeCode ? "one-time code" : "credential"
            throw CLIError("no \(what) for \(service)", hint: "'coffer list' shows what is stored", code: .noInput)
        case .choiceRequired(let suggestions):
            throw siblingsOnly(service, suggestions)
        case .cancelled(let error):
            throw CLIError.from(error)
        }
    }

    /// Exit 66 when only other hosts of the site match and nobody can choose: names the
    /// sibling and the two ways to allow it (SPEC.md §8.1).
    static func siblingsOnly(_ service: CredentialServiceIdentifier, _ suggestions: [PasswordCredentialIdentity]) -> CLIError {
        let first = suggestions[0]
        let others = suggestions.count > 1 ? " (and \(suggestions.count - 1) more)" : ""
        if ServiceMatcher.site(of: first.serviceIdentifier) != ServiceMatcher.site(of: service) {
            // A login of a site that shares its accounts with this one (SPEC.md §8.1.1).
            return CLIError(
                "no login for \(service) itself; \(first.user.isEmpty ? "" : first.user + "@")\(first.serviceIdentifier) was saved for a site that shares its logins with it\(others), and is not filled without your choice",
                hint: "run 'coffer fill \(service.identifier)' on a terminal to choose it, or add this site to it with 'coffer edit \(first.recordIdentifier.prefix(8)) --add-service \(service.identifier)'",
                code: .noInput)
        }
        return CLIError(
            "no login for \(service) itself; \(first.user.isEmpty ? "" : first.user + "@")\(first.serviceIdentifier) is a login for another host of the same site\(others), and is not filled without your choice",
            hint: "run 'coffer fill \(service.identifier)' on a terminal to choose it, or let it fill this whole site with 'coffer edit \(first.recordIdentifier.prefix(8)) --match site'",
            code: .noInput)
    }
}
