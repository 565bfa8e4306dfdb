import CofferProvider
import CofferHostKit
import CofferTerminalKit

/// `git-credential-coffer`: git's credential-helper protocol (gitcredentials(7),
/// git-credential(1)) on top of the provider.
///
/// - `get` goes through the provider's silent path; when the vault is locked it prompts only if
///   a terminal is present, otherwise it prints nothing and git falls back to its own prompt.
/// - `store` saves only when the vault is already unlocked (a session) and never prompts.
/// - `erase` removes the matching credential, also only when unlocked.
/// Unknown operations and attributes are ignored, as the protocol requires.
public enum GitCredentialHelper {
    public static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration = .standard) -> Int32 {
        do {
            let (options, operation) = try CredentialHelperSupport.parse(arguments)
            let helper = CredentialHelperSupport(io: io, configuration: configuration, options: options)
            let attributes = readAttributes(io.standardInput)
            guard let service = service(from: attributes) else { return 0 }
            switch operation {
            case "get": get(helper, service: service, user: attributes["username"])
            case "store": try store(helper, service: service, attributes: attributes)
            case "erase": try erase(helper, service: service, user: attributes["username"])
            default: break
            }
        } catch {
            // A helper's failure must not break git: say why on stderr and let git go on.
            io.standardError("git-credential-coffer: \(CLIError.from(error).message)\n")
        }
        return 0
    }

    /// `key=value` lines up to a blank line or the end of input.
    static func readAttributes(_ input: LineReader) -> [String: String] {
        var attributes: [String: String] = [:]
        while let line = input.readTextLine(), !line.isEmpty {
            guard let equals = line.firstIndex(of: "=") else { continue }
            attributes[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return attributes
    }

    /// `protocol://host[:port][/path]`; the path is present only when git sends it
    /// (`credential.useHttpPath`).
    static func service(from attributes: [String: String]) -> CredentialServiceIdentifier? {
        if let url = attributes["url"], url.contains("://") { return CredentialServiceIdentifier(identifier: url, type: .URL) }
        guard let host = attributes["host"], !host.isEmpty else { return nil }
        let scheme = attributes["protocol"] ?? "https"
        let path = attributes["path"].map { "/" + $0 } ?? ""
        return CredentialServiceIdentifier(identifier: "\(scheme)://\(host)\(path)", type: .URL)
    }

    static func get(_ helper: CredentialHelperSupport, service: CredentialServiceIdentifier, user: String?) {
        guard let vault = try? helper.vault() else { return }
        let interaction = CommandLineInteraction(context: helper.context)
        let result = helper.context.hostSession(of: vault, interaction: interaction).fill(
            from: vault, rules: .git, serviceIdentifiers: [service], user: user, allowInteraction: interaction.isAvailable)
        guard case .filled(let credential, _) = result else { return }
        // A value with a line break or NUL cannot be expressed in the protocol.
        guard !(credential.user + credential.password).contains(where: { $0 == "\n" || $0 == "\0" }) else { return }
        helper.io.standardOutput("username=\(credential.user)\npassword=\(credential.password)\n")
    }

    static func store(_ helper: CredentialHelperSupport, service: CredentialServiceIdentifier, attributes: [String: String]) throws {
        guard let user = attributes["username"], let password = attributes["password"] else { return }
        let vault = try helper.vault()
        guard vault.isUnlocked else { return }  // never prompts; locked means git keeps its copy
        try helper.save(in: vault, service: service, user: user, password: password, rules: .git)
    }

    static func erase(_ helper: CredentialHelperSupport, service: CredentialServiceIdentifier, user: String?) throws {
        let vault = try helper.vault()
        guard vault.isUnlocked else { return }
        for id in try helper.matchingRecords(in: vault, service: service, user: user, rules: .git) {
            try vault.deleteRecord(withID: id)
        }
    }
}
