import Coffer
import CofferTerminalKit
import FoundationEssentials

struct QuickUnlockCommand: Command {
    static let subcommands = ["enable", "disable", "status"]
    static let name = "quick-unlock"
    static let summary = "unlock with a PIN on this device instead of the master password"
    static let usage = "quick-unlock enable --pin|--system|--tpm [--pin] [--for DURATION] | disable | status [--json]"
    static let discussion = """
        'enable --pin' asks for the master password (always: a session does not stand in for it),
        then a new PIN twice (with --password-stdin: the first line of standard input is the master
        password, the second the PIN). From then on every prompt of Coffer's on this device — the
        terminal's and pinentry's — takes the PIN or the master password, until the machine
        restarts (or for DURATION, e.g. 8h, 7d). Three wrong PINs end it; so do 'coffer passwd' and
        'disable'. The PIN is never stored: it and a secret kept only in the kernel keyring wrap the
        vault key in this device's state, which a copied disk, a backup or a sync never carries.
        A script's --password-stdin line is always the master password, never a PIN.
        'enable --tpm' seals the secret with this machine's TPM 2.0 instead (/dev/tpmrm0, or the
        TCTI in COFFER_TPM_TCTI): it survives restarts and lasts 14 days (or DURATION), after which
        the master password, given once, renews it. With --pin the TPM itself checks the PIN and
        locks out after too many wrong ones; without, an empty answer at the prompt unlocks.
        """
    static let examples = [
        "coffer quick-unlock enable --pin", "coffer quick-unlock enable --pin --for 7d", "coffer quick-unlock enable --tpm --pin",
        "coffer quick-unlock status",
    ]
    static let options: [OptionSpec] = [
        .flag("pin", "a PIN (4 to 64 characters) opens the vault on this device"),
        .flag("system", "the system's authentication (polkit: your account's password, a fingerprint) opens it"),
        .flag("tpm", "this machine's TPM 2.0 holds the secret (with --pin: and checks the PIN)"),
        .value("for", "how long it lasts, e.g. 8h, 7d (default: until the machine restarts; with --tpm 14d)"),
        .flag("json", "status as one JSON object"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let action = try context.positionals(1...1, names: "enable, disable or status")[0]
        let vault = try context.openVault()
        guard TeamDirectory.owner(of: vault) == nil else {
            throw CLIError("a team opens with your own vault", hint: "turn quick unlock on for your own vault: its PIN opens your teams too", code: .usage)
        }
        let secrets = context.configuration.sessions ?? KeyringSessions()
        switch action {
        case "enable":
            let system = context.arguments.has("system"), tpm = context.arguments.has("tpm"), pin = context.arguments.has("pin")
            guard [pin || tpm, system].filter({ $0 }).count == 1 else {
                throw UsageError("name one method: 'coffer quick-unlock enable --pin', '--system' or '--tpm [--pin]'")
            }
            let lifetime = try context.arguments.value("for").map { try Duration.parse($0) } ?? (tpm ? TPM.lifetime : nil)
            try proveMasterPassword(vault, context)
            do {
                if system {
                    try enableSystemAuthentication(vault, secrets: secrets, lifetime: lifetime, context)
                } else if tpm {
                    let pin = pin ? try context.newSecret(prompt: "New PIN: ", confirm: "Repeat the PIN: ") : nil
                    try vault.enableTPMQuickUnlock(pin: pin, tpm: TPM(environment: context.io.environment), secrets: secrets, lifetime: lifetime ?? TPM.lifetime)
                } else {
                    let pin = try context.newSecret(prompt: "New PIN: ", confirm: "Repeat the PIN: ")
                    try vault.enableQuickUnlock(pin: pin, secrets: secrets, lifetime: lifetime)
                }
            } catch let unavailable as KeyringSessions.Unavailable {
                throw CLIError("\(unavailable)", hint: "quick unlock keeps its device secret in the kernel keyring", code: .unavailable)
            }
            let what = system ? "the system's authentication" : tpm ? (pin ? "the TPM and the PIN" : "the TPM") : "the PIN"
            context.note("quick unlock on: \(what) opens this vault on this device " + (lifetime.map { "for \(Duration.format($0))" } ?? "until it restarts"))
        case "disable":
            try vault.disableQuickUnlock(secrets: secrets)
            context.note("quick unlock off on this device")
        case "status":
            let state = vault.quickUnlockState(secrets: secrets)
            context.print(context.wantsJSON ? JSONOutput.render(.object(json(state))) : "quick unlock: " + describe(state))
        default:
            throw UsageError("expected 'enable', 'disable' or 'status', not '\(action)'")
        }
        return .success
    }

    /// Asked once now, so that a desktop without polkit or an agent says so here.
    private static func enableSystemAuthentication(_ vault: Vault, secrets: KeyringSessions, lifetime: TimeInterval?, _ context: CommandContext) throws {
        guard let authenticator = context.configuration.systemAuthenticator?() else {
            throw CLIError("this program cannot reach the system's authentication", code: .unavailable)
        }
        switch authenticator.authenticate(reason: "to turn on quick unlock for \(vault.container.path)") {
        case .authorized: try vault.enableSystemQuickUnlock(secrets: secrets, lifetime: lifetime)
        case .denied: throw CLIError("the system's authentication was refused; quick unlock stays off", code: .permissionDenied)
        case .unavailable(let why):
            throw CLIError("the system's authentication is unavailable: \(why)", hint: "polkit and an authentication agent must run (scripts/install puts Coffer's action in place)", code: .unavailable)
        }
    }

    /// The master password, asked even when a session is live, and never a PIN in its place.
    private static func proveMasterPassword(_ vault: Vault, _ context: CommandContext) throws {
        let policy = context.hostSession(of: vault, interaction: CommandLineInteraction(context: context)).unlockPolicy
        policy.allowsQuickUnlock = false
        policy.startsSessions = false
        try context.unlock(vault, policy: policy, proving: true)
    }

    /// "PIN, until the machine restarts, 3 attempts left", or why it is off.
    static func describe(_ state: QuickUnlockState) -> String {
        switch state {
        case .off: "off"
        case .available(let method, let attempts, let expires):
            name(of: method) + ", "
                + (expires.map { "until \(UTCTimestamp.format($0))" + (method.usesTPM ? " (then the master password renews it)" : "") } ?? "until the machine restarts")
                + (method.takesPIN ? ", \(attempts) attempt\(attempts == 1 ? "" : "s") left" : "")
        case .ended(let end): "off (\(end))"
        }
    }

    static func name(of method: QuickUnlockFile.Method) -> String { names(of: method).text }

    /// How the command line names a method, in sentences and in `--json`: one table for both.
    static func names(of method: QuickUnlockFile.Method) -> (text: String, json: String) {
        switch method {
        case .pin: ("PIN", "pin")
        case .system: ("system authentication", "system")
        case .tpm: ("TPM", "tpm")
        case .tpmWithPIN: ("TPM and PIN", "tpm+pin")
        }
    }

    static func json(_ state: QuickUnlockState) -> JSONObject {
        switch state {
        case .off: return ["quickUnlock": .null]
        case .available(let method, let attempts, let expires):
            return ["quickUnlock": .object([
                "method": .string(names(of: method).json), "attemptsLeft": method.takesPIN ? .integer(attempts) : .null,
                "expires": expires.map { .string(UTCTimestamp.format($0)) } ?? .null,
            ])]
        case .ended(let end): return ["quickUnlock": .null, "quickUnlockEnded": .string(end.description)]
        }
    }
}
