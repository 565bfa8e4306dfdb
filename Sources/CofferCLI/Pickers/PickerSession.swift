import Coffer
import CofferTerminalKit

/// What `coffer pick` and `coffer menu` share: the entries a person picks from (identities from
/// the identity store, readable while locked), and what happens to the pick. The secret comes
/// through the provider's interactive path with pinentry as its `UserInteraction` — the desktop
/// prompt gpg and rbw use — so a locked vault asks there, and a `coffer unlock` session counts.
struct PickerSession {
    let context: CommandContext
    let vault: Vault
    /// The one-time code instead of the password.
    let oneTimeCode: Bool

    /// One line per identity for a picker: `service  user  name  [id8]`. The id closes the line
    /// so a pick maps back to exactly one entry whatever the launcher returns.
    struct Entry {
        let line: String
        let identity: RankedIdentity
        /// The vault it is in: one's own, or a team's (whose lines start with `TEAM:`).
        let vault: Vault
    }

    enum Action { case print, clip, type }

    static func action(_ arguments: ParsedArguments, default fallback: Action) throws -> Action {
        let chosen = [("print", Action.print), ("clip", .clip), ("type", .type)].filter { arguments.has($0.0) }
        guard chosen.count <= 1 else { throw UsageError("choose one of --print, --clip and --type") }
        return chosen.first?.1 ?? fallback
    }

    /// Every entry, best first. A vault whose store is off on this device is unlocked first
    /// (through pinentry): listing needs the index key.
    func entries() throws -> [Entry] {
        let store = vault.identityStore
        if !store.state.isEnabled && !vault.isUnlocked { try unlockWithPinentry() }
        var entries = Self.entries(of: try store.identityListing(), in: vault, team: nil, oneTimeCode: oneTimeCode)
        // Then one's teams' (SPEC.md §16.6), those readable now.
        for team in context.teams(ownedBy: vault.container) {
            context.unlockFromSession(team.vault)
            guard let listing = try? team.vault.identityStore.identityListing() else { continue }
            entries += Self.entries(of: listing, in: team.vault, team: team.name, oneTimeCode: oneTimeCode)
        }
        return entries
    }

    private static func entries(of listing: IdentityListing, in vault: Vault, team: String?, oneTimeCode: Bool) -> [Entry] {
        let wanted: IdentityListing.Entry = oneTimeCode ? .oneTimeCode : .password
        return listing.rows.filter { $0.entry == wanted }.map { row in
            let ranked = listing.rankedIdentity(row)
            let name = listing.name(row)
            let service = (team.map { $0 + ":" } ?? "") + ranked.identity.serviceIdentifier.identifier
            let parts = [service, ranked.identity.user, name].filter { !$0.isEmpty }
            // A launcher shows the line to a person, and one line per entry: escaped (SPEC.md §10).
            return Entry(line: DisplayText.escaped(parts.joined(separator: "  ")) + "  [\(row.recordID.hex.prefix(8))]", identity: ranked, vault: vault)
        }
    }

    /// The entry a picker returned (its line, or a line ending in the entry's `[id8]`).
    static func entry(for line: String, in entries: [Entry]) -> Entry? {
        let trimmed = line.trimmingSpaces()
        return entries.first { $0.line == trimmed } ?? entries.first { trimmed.hasSuffix(String($0.line.suffix(10))) }
    }

    func unlockWithPinentry() throws {
        let session = context.hostSession(of: vault, interaction: PinentryInteraction(environment: context.io.environment), startsSessions: true)
        switch try session.unlock(vault, reason: "to list your logins") {
        case .unlocked: return
        case .noInteraction, .cancelled: throw CLIError("cancelled", code: .failure)
        case .wrongPassword: throw CLIError("wrong master password", code: .permissionDenied)
        }
    }

    /// Provides the picked entry's secret through the provider (silent when unlocked, else
    /// pinentry) and prints, copies or types it.
    func deliver(_ entry: Entry, action: Action) throws {
        let vault = entry.vault
        let provider = context.hostSession(of: vault, interaction: PinentryInteraction(environment: context.io.environment), startsSessions: true)
            .provider(for: vault)
        let secret: String
        if oneTimeCode {
            provider.prepareInterfaceToProvideCredential(for: entry.identity.oneTimeCodeIdentity)
        } else {
            provider.prepareInterfaceToProvideCredential(for: entry.identity.identity)
        }
        switch provider.extensionContext.outcome {
        case .completed(let credential)?: secret = credential.password
        case .completedOneTimeCode(let credential)?: secret = credential.code
        case .cancelled(let error)?: throw CLIError.from(error)
        default: throw CLIError("the provider did not answer", code: .software)
        }
        let what = oneTimeCode ? "one-time code" : "password"
        switch action {
        case .print:
            context.print(secret)
        case .clip:
            let delay = try Clipboard.copy(secret, io: context.io)
            context.note("copied the \(what) for \(entry.identity.identity.user.isEmpty ? entry.identity.identity.serviceIdentifier.identifier : entry.identity.identity.user); it is cleared in \(delay) s")
        case .type:
            try Self.type(secret, environment: context.io.environment)
        }
    }

    /// Types text into the focused window: `wtype` on Wayland, `xdotool` on X11, reading it from
    /// stdin (never argv), as rofi-pass and rofi-rbw do.
    static func type(_ text: String, environment: Environment) throws {
        let tool: [String]
        if environment["WAYLAND_DISPLAY"] != nil, let wtype = Clipboard.find("wtype", environment) {
            tool = [wtype, "-"]
        } else if environment["DISPLAY"] != nil, let xdotool = Clipboard.find("xdotool", environment) {
            tool = [xdotool, "type", "--clearmodifiers", "--file", "-"]
        } else {
            throw CLIError("nothing can type here: wtype (Wayland) or xdotool (X11) and a display are needed", hint: "use --clip or --print", code: .unavailable)
        }
        let status = try Clipboard.spawn(tool, environment: environment, input: Array(text.utf8))
        guard status == 0 else { throw CLIError("\(tool[0]) failed (exit status \(status))", code: .osError) }
    }
}
