import CofferProvider
import CofferHostKit
import CofferTerminalKit
import FoundationEssentials

/// `docker-credential-coffer`: the docker-credential-helpers protocol. JSON on stdin and
/// stdout; on a miss `get` prints `credentials not found in native keychain` and exits 1.
/// Helpers never prompt: docker runs them without a terminal, so the vault must be unlocked
/// with `coffer unlock` first.
public enum DockerCredentialHelper {
    /// Marks records this helper wrote, for `list`.
    static let marker = ("coffer.helper", "docker")
    static let notFound = "credentials not found in native keychain"

    public static func run(_ arguments: [String], io: IO, configuration: CLIConfiguration = .standard) -> Int32 {
        do {
            let (options, operation) = try CredentialHelperSupport.parse(arguments)
            let helper = CredentialHelperSupport(io: io, configuration: configuration, options: options)
            switch operation {
            case "get": return try get(helper)
            case "store": return try store(helper)
            case "erase": return try erase(helper)
            case "list": return try list(helper)
            case "version": io.standardOutput("docker-credential-coffer (coffer \(cofferVersion))\n")
            default:
                io.standardOutput("unknown operation: \(operation ?? "")\n")
                return 1
            }
            return 0
        } catch {
            io.standardOutput(CLIError.from(error).message + "\n")
            return 1
        }
    }

    static func service(_ serverURL: String) -> CredentialServiceIdentifier {
        CredentialServiceIdentifier(parsing: serverURL.trimmingSpaces())
    }

    static func unlockedVault(_ helper: CredentialHelperSupport) throws -> Vault {
        let vault = try helper.vault()
        guard vault.isUnlocked else {
            throw CLIError("the Coffer vault is locked: run 'coffer unlock' first", code: .temporaryFailure)
        }
        return vault
    }

    static func get(_ helper: CredentialHelperSupport) throws -> Int32 {
        guard let serverURL = helper.io.standardInput.readTextLine(), !serverURL.isEmpty else {
            helper.io.standardOutput(notFound + "\n")
            return 1
        }
        let vault = try helper.vault()
        switch helper.context.hostSession(of: vault, interaction: nil).fill(
            from: vault, rules: .docker, serviceIdentifiers: [service(serverURL)], allowInteraction: false) {
        case .filled(let credential, _):
            helper.io.standardOutput(JSONOutput.render(["ServerURL": .string(serverURL), "Username": .string(credential.user), "Secret": .string(credential.password)]) + "\n")
            return 0
        case .noMatch, .choiceRequired, .filledCode:  // a password fill never answers with a code
            helper.io.standardOutput(notFound + "\n")
            return 1
        case .cancelled(let error):
            throw CLIError.from(error)
        }
    }

    static func store(_ helper: CredentialHelperSupport) throws -> Int32 {
        var text = ""
        while let line = helper.io.standardInput.readTextLine() { text += line + "\n" }
        guard let object = (try? JSONValue.parse(text))?.objectValue,
              let serverURL = object["ServerURL"]?.stringValue, let user = object["Username"]?.stringValue,
              let secret = object["Secret"]?.stringValue
        else { throw CLIError("expected {\"ServerURL\", \"Username\", \"Secret\"} on stdin", code: .usage) }
        let vault = try unlockedVault(helper)
        try helper.save(in: vault, service: service(serverURL), user: user, password: secret, fields: [RecordField(name: marker.0, value: marker.1)], rules: .docker)
        return 0
    }

    static func erase(_ helper: CredentialHelperSupport) throws -> Int32 {
        guard let serverURL = helper.io.standardInput.readTextLine() else { return 0 }
        let vault = try unlockedVault(helper)
        for id in try helper.matchingRecords(in: vault, service: service(serverURL), user: nil, rules: .docker)
        where (try? vault.record(withID: id))?.field(marker.0) == marker.1 {
            try vault.deleteRecord(withID: id)
        }
        return 0
    }

    static func list(_ helper: CredentialHelperSupport) throws -> Int32 {
        let vault = try unlockedVault(helper)
        var servers: [String: String] = [:]
        for record in try vault.allRecords() where record.field(marker.0) == marker.1 {
            if let service = record.serviceIdentifiers.first { servers[service.identifier] = record.user }
        }
        helper.io.standardOutput(JSONOutput.render(.object(JSONObject(servers.mapValues(JSONValue.string)))) + "\n")
        return 0
    }
}
