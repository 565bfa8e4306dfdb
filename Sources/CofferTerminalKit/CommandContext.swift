import CofferProvider
import CofferHostKit

/// What a running command can use: its arguments, the IO, and the vault behind the options.
package final class CommandContext {
    package let arguments: ParsedArguments
    package let io: IO
    package let configuration: CLIConfiguration
    /// The vault this run opened (the last, if several): what an automatic sync syncs.
    package private(set) var openedVault: Vault?

    package init(arguments: ParsedArguments, io: IO, configuration: CLIConfiguration) {
        self.arguments = arguments
        self.io = io
        self.configuration = configuration
    }

    /// A terminal to ask on, unless `--no-interaction` forbids asking.
    package var terminal: Terminal? { arguments.has("no-interaction") ? nil : io.terminal }

    /// Where the command's own values (an item's password, a one-time-code secret, a note's
    /// body, an item's text, a key's passphrase) are typed: the terminal — unless
    /// `--password-stdin` names standard input as the source, in which case every value comes
    /// from its lines after the master password's, terminal or not (SPEC.md §8.3). Questions (a
    /// yes/no, a choice) still go to `terminal`.
    package var valueTerminal: Terminal? { arguments.has("password-stdin") ? nil : terminal }
    package var wantsJSON: Bool { arguments.has("json") }

    package func print(_ line: String) { io.standardOutput(line + "\n") }
    /// A message on stderr; control characters a name or label in it may hold are escaped
    /// (SPEC.md §10): a message can never drive the person's terminal.
    package func note(_ line: String) { io.standardError("coffer: " + DisplayText.escaped(line, keepingLineBreaks: true) + "\n") }

    /// `--container`, else `--group`, else `$COFFER_CONTAINER`, else the default group
    /// (`HostSession`'s order, the same for every host) — or the team an operand named.
    package func container() throws -> GroupContainer {
        if let team { return try TeamDirectory.container(named: team, environment: io.environment) }
        return try HostSession.resolveContainer(path: arguments.value("container"), group: arguments.value("group"), environment: io.environment)
    }

    /// `--container DIR` (made absolute) or `--group ID` as this run was given them, for a
    /// process it starts or registers to find the same vault (a daemon that leaves the working
    /// directory, a browser's host wrapper); empty when neither was given. Read here only, in
    /// `container()`'s order.
    package var vaultLocationArguments: [String] {
        if let path = arguments.value("container") { return ["--container", FileSystem.absolutePath(path)] }
        if let group = arguments.value("group") { return ["--group", group] }
        return []
    }

    /// The team this run works in (`TEAM:ENTRY`, `add --team`), if any.
    package private(set) var team: String?

    /// Reads `TEAM:ENTRY` (SPEC.md §16.6): when the part before the first `:` names a team on
    /// this device (and is not a URL's scheme), the run works in that team and the rest is the
    /// entry. Any other operand is returned as it is.
    package func scoped(_ operand: String) -> String {
        guard let (name, entry) = teamReference(operand) else { return operand }
        team = name
        return entry
    }

    /// `operand` as `TEAM:ENTRY` when the part before the first `:` names a team on this device
    /// and the rest is no URL's `//…`; `nil` for any other operand. The one reading of the form,
    /// for operands and for `coffer://` references alike.
    package func teamReference(_ operand: String) -> (team: String, entry: String)? {
        guard let colon = operand.firstIndex(of: ":") else { return nil }
        let name = String(operand[..<colon]), rest = String(operand[operand.index(after: colon)...])
        guard !rest.hasPrefix("//"), (try? Vault.teamGroupIdentifier(name)) != nil,
              let container = try? TeamDirectory.container(named: name, environment: io.environment),
              (try? FileSystem.standard.userPathStatus(container.path)) != nil
        else { return nil }
        return (name, rest)
    }

    /// The teams `owner` (a personal container) opens on this device, by name (SPEC.md §16.6).
    package func teams(ownedBy owner: GroupContainer, includingRemoved: Bool = false) -> [(name: String, vault: Vault)] {
        TeamDirectory.teams(ownedBy: owner, environment: io.environment, configuration: vaultConfiguration, includingRemoved: includingRemoved)
    }

    /// Works in team `name` (`--team NAME`).
    package func useTeam(_ name: String) throws {
        try _ = Vault.teamGroupIdentifier(name)
        let container = try TeamDirectory.container(named: name, environment: io.environment)
        guard (try? FileSystem.standard.userPathStatus(container.path)) != nil else { throw TeamError.noTeam(name) }
        team = name
    }

    /// The door for a long-lived host this command runs (the SSH agent, the Secret Service):
    /// this run's container, vault settings and sessions, with `interaction` as the way to ask;
    /// an unlock through it starts a keyring session, as a desktop host's does.
    package func hostSession(interaction: UserInteraction?) throws -> HostSession {
        configured(HostSession(container: try container(), configuration: vaultConfiguration, sessions: configuration.sessions, interaction: interaction),
                   startsSessions: true)
    }

    /// The door for the vault this run opened: the provider of `fill`, the helpers, the pickers.
    /// - Parameter startsSessions: whether a password typed through it starts a keyring session
    ///   (a picker's pinentry does; a command's terminal prompt does not: `coffer unlock` is the
    ///   person's explicit choice to start one).
    package func hostSession(of vault: Vault, interaction: UserInteraction?, startsSessions: Bool = false) -> HostSession {
        configured(HostSession(container: vault.container, configuration: vaultConfiguration, sessions: configuration.sessions, interaction: interaction),
                   startsSessions: startsSessions)
    }

    /// This run's settings on a host's unlock policy: its environment (tests inject it), and a
    /// supplied master password always read and checked, never replaced by a session.
    private func configured(_ session: HostSession, startsSessions: Bool) -> HostSession {
        session.environment = io.environment
        session.startsSessions = startsSessions
        session.unlockPolicy.unlocksFromSessions = !suppliesMasterPassword
        session.unlockPolicy.systemAuthenticator = configuration.systemAuthenticator?()
        return session
    }

    /// The vault settings for this run: the host's KDF policy and file system, device state
    /// under `$XDG_STATE_HOME/coffer`.
    package var vaultConfiguration: VaultConfiguration {
        var vault = VaultConfiguration.standard(environment: io.environment)
        vault.kdfPolicy = configuration.kdfPolicy
        vault.fileSystem = configuration.fileSystem
        let io = self.io
        vault.recoveryNotice = { io.standardError("coffer: \($0)\n") }
        return vault
    }

    /// Opens the vault; with `--accept-rollback`, first accepts its generation on this device
    /// (every command that opens the vault goes through here, `fill` included).
    package func openVault() throws -> Vault {
        let vault = try Vault.open(container(), configuration: vaultConfiguration)
        openedVault = vault
        if arguments.has("accept-rollback") {
            unlockFromSession(vault)
            if !vault.isUnlocked && !vault.identityStore.state.isEnabled { try unlock(vault) }
            try vault.acceptRollback()
            note("accepted the vault at its current generation; this device forgets the newer one it had seen")
        }
        return vault
    }

    /// Opens the vault and unlocks it with the master password from the chosen source.
    package func unlockedVault() throws -> Vault {
        try sessionVault(requireUnlocked: true)
    }

    /// Opens the vault, unlocked from a live keyring session if there is one; unlocks it with
    /// the master password when `requireUnlocked` and no session does.
    ///
    /// With `--password-stdin` or `--password-file` the supplied line is the master password
    /// whatever the session: it is read and checked (a wrong one exits 77) even when a session
    /// is live, so the next line of stdin is always the item's secret (SPEC.md §10.1).
    package func sessionVault(requireUnlocked: Bool) throws -> Vault {
        let vault = try openVault()
        unlockFromSession(vault)
        if (requireUnlocked || suppliesMasterPassword) && !vault.isUnlocked { try unlock(vault) }
        return vault
    }

    /// Whether the master password comes from `--password-stdin` or `--password-file`: then it
    /// is always read and checked, never replaced by a keyring session.
    package var suppliesMasterPassword: Bool { arguments.has("password-stdin") || arguments.has("password-file") }

    /// Uses a `coffer unlock` session if one is live; where the keyring is unavailable, says
    /// why once and goes on without it.
    /// Never with a supplied master password, which is always the one that unlocks.
    package func unlockFromSession(_ vault: Vault) {
        guard configuration.sessions != nil, !suppliesMasterPassword else { return }
        do {
            // One ask of the keyring; a team without a session of its own opens with its owner's
            // (SPEC.md §16.6).
            _ = try hostSession(of: vault, interaction: nil).unlockPolicy.unlockFromSessionReportingErrors(vault)
        } catch {
            note("\(error); every command will ask for the master password")
        }
    }

    /// Unlocks with the master password from the chosen source through the hosts' one policy
    /// (`HostSession`: three attempts on a terminal; a supplied password gets one), or throws
    /// `.locked` when there is no source. A command never starts a keyring session by itself.
    /// - Parameter proving: ask for the password even when the vault is unlocked.
    package func unlock(_ vault: Vault, policy: UnlockPolicy? = nil, proving: Bool = false) throws {
        guard suppliesMasterPassword || terminal != nil else { throw VaultError.locked }
        let policy = policy ?? hostSession(of: vault, interaction: CommandLineInteraction(context: self)).unlockPolicy
        if policy.quickUnlockNotice == nil { policy.quickUnlockNotice = { [self] in note($0) } }
        let outcome: UnlockPolicy.Outcome
        do {
            outcome = try policy.unlock(vault, reason: "for \(vault.container.path)", proving: proving)
        } catch VaultError.wrongPassword {
            outcome = .wrongPassword
        }
        switch outcome {
        case .unlocked: return
        case .noInteraction: throw VaultError.locked
        case .cancelled: throw CLIError("cancelled", code: .failure)
        case .wrongPassword where vault.isSyncedContainer:
            throw CLIError("wrong master password for this device's copy of the vault",
                           hint: "if it was changed on another device, this device learns the new one at its next sync: run 'coffer sync' once with the old password",
                           code: .permissionDenied)
        case .wrongPassword: throw VaultError.wrongPassword
        }
    }

    /// "deriving the key (Argon2id, 1 GiB)…" while Argon2id runs, drawn only if it takes more
    /// than a quarter second (`--kdf sensitive`; the default costs ~0.15 s and prints nothing).
    package func keyDerivationProgress(_ kdf: KDFParameters) -> ProgressLine {
        let mebibytes = kdf.memLimit >> 20
        let memory = mebibytes >= 1024 && mebibytes % 1024 == 0 ? "\(mebibytes >> 10) GiB" : "\(mebibytes) MiB"
        return ProgressLine(io: io, label: "deriving the key (Argon2id, \(memory))", enabled: !wantsJSON)
    }

    /// The master password from `--password-file`, `--password-stdin` or the terminal, in that
    /// order; `nil` when none of them is available.
    package func masterPassword(prompt: String) throws -> SecureBytes? {
        if let file = arguments.value("password-file") {
            var bytes = try FileSystem.standard.readUserFile(file, limit: 64 << 10)
            defer { for index in bytes.indices { bytes[index] = 0 } }
            guard let line = try BufferLineReader(bytes: bytes).readSecretLine() else {
                throw CLIError("\(file) is empty; expected the master password on its first line", code: .usage)
            }
            return line
        }
        if arguments.has("password-stdin") {
            guard let line = try io.standardInput.readSecretLine() else {
                throw CLIError("--password-stdin: standard input is empty", code: .usage)
            }
            return line
        }
        guard let terminal else { return nil }
        guard let password = try terminal.readSecret(prompt: prompt) else { throw CLIError("cancelled", code: .failure) }
        return password
    }

    /// A new secret typed twice on the terminal, or the next line of stdin (always stdin with
    /// `--password-stdin`: `valueTerminal`).
    package func newSecret(prompt: String, confirm: String) throws -> SecureBytes {
        if let terminal = valueTerminal {
            guard let first = try terminal.readSecret(prompt: prompt),
                  let second = try terminal.readSecret(prompt: confirm)
            else { throw CLIError("cancelled") }
            guard first == second else { throw CLIError("the two entries do not match; nothing was changed", code: .usage) }
            guard first.count > 0 else { throw CLIError("empty password refused", code: .usage) }
            return first
        }
        guard let line = try io.standardInput.readSecretLine(), line.count > 0 else {
            throw CLIError("no password: expected it on a terminal or on the next line of standard input", code: .usage)
        }
        return line
    }

    /// A secret typed once (pasted, like a one-time-code URI), or the next line of stdin
    /// (always stdin with `--password-stdin`).
    package func pastedSecret(prompt: String) throws -> SecureBytes {
        if let terminal = valueTerminal {
            guard let value = try terminal.readSecret(prompt: prompt), value.count > 0 else { throw CLIError("cancelled") }
            return value
        }
        guard let line = try io.standardInput.readSecretLine(), line.count > 0 else {
            throw CLIError("expected it on a terminal or on the next line of standard input", code: .usage)
        }
        return line
    }

    /// `--otp`: an otpauth:// URI or base32 secret, never from argv; checked before anything
    /// is written. A bare secret is stored as a URI labelled `account`.
    package func oneTimeCodeSecret(account: String) throws -> String {
        let text = try pastedSecret(prompt: "One-time code (otpauth:// URI or base32 secret): ").unsafeString()
        do { return try OneTimeCodeParameters.storedValue(of: text, account: account) } catch { throw CLIError("\(error)", code: .dataError) }
    }

    /// Exactly `range` positionals, or a usage error.
    package func positionals(_ range: ClosedRange<Int>, names: String) throws -> [String] {
        let values = arguments.positionals
        guard range.contains(values.count) else {
            throw UsageError(values.count < range.lowerBound ? "missing \(names)" : "unexpected argument '\(values[range.upperBound])'")
        }
        return values
    }
}

extension SecureBytes {
    /// The secret as a String; for credential passwords that must become part of a record.
    /// - Warning: the String is ordinary memory and is not wiped.
    package func unsafeString() -> String {
        withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
