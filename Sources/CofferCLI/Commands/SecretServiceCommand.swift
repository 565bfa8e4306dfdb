import Coffer
import CofferTerminalKit
import CofferSecretService

/// `coffer secret-service`: Coffer as the desktop's keyring (SPEC.md §17), so secret-tool,
/// libsecret, Python's keyring, Chrome's "Safe Storage" key and NetworkManager keep their secrets
/// in the vault; `clients` lists and revokes the programs allowed to read others' secrets.
struct SecretServiceCommand: Command {
    static let subcommands = ["clients"]
    static let name = "secret-service"
    static let summary = "be the desktop's keyring: the freedesktop Secret Service on the session bus"
    static let usage = "secret-service [--replace] [--no-pinentry] [--no-approval] | secret-service clients [--revoke PATH]"
    static let discussion = """
        Owns org.freedesktop.secrets on the session bus in the foreground (D-Bus activation and
        the systemd user unit start it so) and keeps every item applications store through it in
        the vault, as items of kind 'secret': synced, backed up and exported like the rest. If
        another keyring (gnome-keyring, KWallet, KeePassXC) owns the name it refuses to start;
        --replace takes the name over. While the vault is locked applications can search (by
        attributes, which the index keeps only as digests) but not read: an application's Unlock
        asks for the master password through pinentry (COFFER_PINENTRY) and starts a session as
        'coffer unlock' does; 'coffer lock' locks the keyring too. When a program reads, changes
        or deletes an item another program stored, pinentry asks — one question naming every item
        of the call: Always allow, Allow once or Deny. Programs are told apart by the executable
        the kernel names for the caller, never by what they claim, and a connection stays bound to
        the program that made its first call (a process that execs another is asked as one Coffer
        cannot name). 'clients' lists the programs allowed always; --revoke PATH forgets one.
        --no-approval turns the question off (any program of yours may read every item, as with
        gnome-keyring); --no-pinentry never asks (locked stays locked, unapproved calls are
        refused). At start it says which pinentry it will use; every refusal and its reason is
        written to its standard error (the journal under systemd). Move an existing keyring's
        items over with 'coffer import --from secret-service'.
        """
    static let examples = [
        "coffer secret-service --replace &", "secret-tool store --label='Example' service example.com user alice",
        "coffer secret-service clients", "coffer secret-service clients --revoke /usr/bin/python3.11",
    ]
    static let options: [OptionSpec] = [
        .flag("replace", "take org.freedesktop.secrets over from the keyring that owns it"),
        .flag("no-pinentry", "never ask: locked stays locked, reads by unapproved programs are refused"),
        .flag("no-approval", "let any program of yours read every item without asking"),
        .value("revoke", "with 'clients': forget the program at PATH"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "clients")
        if let action = operands.first {
            guard action == "clients" else { throw UsageError("expected 'clients' or no operand, not '\(action.prefix(20))'") }
            return try clients(context)
        }
        let pinentry = context.arguments.has("no-pinentry") ? nil : PinentryInteraction(environment: context.io.environment)
        let host = try context.hostSession(interaction: pinentry)
        _ = try host.openVaultWithoutUse()  // no vault (or a damaged header): say so now, not to every application
        let bus: SecretServiceBus
        do {
            bus = try SecretServiceBus(host: host, pinentry: pinentry, replace: context.arguments.has("replace"))
        } catch {
            let hint = switch error {
            case .nameTaken(_, replaceRefused: false): "stop it, or run 'coffer secret-service --replace' to take over"
            case .nameTaken(_, replaceRefused: true): "stop it first (gnome-keyring: start it without the secrets component, --components=pkcs11,ssh)"
            case .noBus: "start one with 'dbus-run-session' or from your desktop session"
            }
            throw CLIError("\(error)", hint: hint, code: .unavailable)
        }
        bus.provider.approvalsRequired = !context.arguments.has("no-approval")
        bus.provider.log = { context.note($0) }
        context.note("serving \(SecretServiceBus.busName) on the session bus")
        // Where a person will be asked — or that nobody can be: said once, at start (SPEC.md §17).
        context.note(pinentry?.whereItAsks ?? "no pinentry (--no-pinentry): a locked vault stays locked and reads of another program's items are refused")
        context.note(try bus.serve())
        return .success
    }

    private static func clients(_ context: CommandContext) throws -> ExitCode {
        let vault = try context.unlockedVault()
        if let path = context.arguments.value("revoke") {
            guard try SecretServiceClients.revoke(path, in: vault) else {
                throw CLIError("\(path) is not an allowed program", hint: "'coffer secret-service clients' lists them", code: .noInput)
            }
            context.note("\(path) must ask again")
            return .success
        }
        let approved = try SecretServiceClients.approved(in: vault)
        if context.wantsJSON {
            context.print(JSONOutput.render(.array(approved.map(JSONValue.string))))
        } else {
            for path in approved { context.print(path) }
        }
        return .success
    }
}
