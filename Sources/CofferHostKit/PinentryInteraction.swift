import CofferProvider

/// The desktop's prompt as the provider's `UserInteraction`: the master password is asked by
/// pinentry, the program gpg-agent and rbw use (pinentry-gnome3, -qt, -gtk, -curses …), over
/// the Assuan protocol on its stdin and stdout. Every desktop host (the browser host, the
/// pickers, the SSH agent) asks through it; `COFFER_PINENTRY` names another program (a test's
/// scripted one).
///
/// It cannot show a list, so it never chooses among suggestions: in the browser the person
/// chooses in the page's list, and the host asks only for the password.
public final class PinentryInteraction: UserInteraction {
    public let program: String
    let environment: Environment
    /// Shown as the window title.
    public var title = "Coffer"

    /// `program` defaults to `$COFFER_PINENTRY`, else `pinentry` on `$PATH`.
    public init(program: String? = nil, environment: Environment = .process) {
        self.program = program ?? environment["COFFER_PINENTRY"].flatMap { $0.isEmpty ? nil : $0 } ?? "pinentry"
        self.environment = environment
    }

    public var canChooseIdentity: Bool { false }

    /// The program's path as it would run (`program` itself when it names a path), or `nil` when
    /// `$PATH` has no such program.
    public var resolvedPath: String? { environment.programPath(program) }

    /// What a service tells at start (SPEC.md §17): the pinentry it will run, or why none can
    /// show a question — no such program, or nothing to show it on.
    public var whereItAsks: String {
        guard let path = resolvedPath else {
            return "no pinentry: '\(program)' is not on PATH (COFFER_PINENTRY names another); a locked vault stays locked and reads of another program's items are refused"
        }
        let display = [environment["WAYLAND_DISPLAY"], environment["DISPLAY"], environment["GPG_TTY"]].contains { !($0 ?? "").isEmpty }
        guard display else {
            return "questions go to pinentry \(path), but no display (DISPLAY, WAYLAND_DISPLAY) or terminal (GPG_TTY) is set: a graphical or terminal pinentry cannot show them"
        }
        return "questions go to pinentry \(path)"
    }

    public func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity? { nil }

    /// Runs one pinentry conversation: title, description, prompt, the error of a previous
    /// wrong attempt, then `GETPIN`. `nil` when the person cancels (or pinentry times out).
    /// - Throws: `AssuanError` when pinentry cannot be started or does not speak Assuan.
    public func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        try requestSecret(
            attempt: attempt, description: "Coffer needs your master password \(reason).", prompt: "Master password:",
            error: "Wrong master password (attempt \(attempt))")
    }

    /// Where quick unlock is on: "PIN for Coffer (or the master password)" (SPEC.md §8.6).
    public func requestPINOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        try requestSecret(
            attempt: attempt, description: "PIN for Coffer (or the master password), \(reason).", prompt: "PIN:",
            error: "Wrong PIN or master password (attempt \(attempt))")
    }

    /// Where the TPM alone opens the vault: Unlock with the field left empty uses it.
    public func requestTPMOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        try requestSecret(
            attempt: attempt, description: "Unlock Coffer with this computer's TPM: leave the field empty and press Unlock (or type the master password), \(reason).",
            prompt: "Master password:", error: "Wrong master password (attempt \(attempt))")
    }

    /// One GETPIN with these texts; `nil` when the person cancelled or the prompt timed out.
    private func requestSecret(attempt: Int, description: String, prompt: String, error: String) throws -> SecureBytes? {
        let child = try start()
        defer {
            try? child.write(Assuan.command("BYE") + [0x0A])
            child.wait()
        }
        try expectOK(child)  // the greeting
        var commands = [Assuan.command("SETTITLE", title), Assuan.command("SETDESC", DisplayText.escaped(description, keepingLineBreaks: true)),
                        Assuan.command("SETPROMPT", prompt), Assuan.command("SETOK", "Unlock")]
        if let tty = environment["GPG_TTY"] { commands.insert(Assuan.command("OPTION", "ttyname=\(tty)"), at: 0) }
        if attempt > 1 { commands.append(Assuan.command("SETERROR", error)) }
        for command in commands { try send(command, to: child) }
        try write(Assuan.command("GETPIN"), to: child)
        var pin: SecureBytes?
        while true {
            guard var line = try readLine(child) else { throw AssuanError.unavailable("pinentry ended before answering") }
            defer { for index in line.indices { line[index] = 0 } }
            switch try Assuan.parse(line[...]) {
            case .data(var bytes):
                defer { for index in bytes.indices { bytes[index] = 0 } }
                pin = try SecureBytes(copying: bytes)
            case .ok:
                return try pin ?? SecureBytes(count: 0)
            case .error(let code, _) where code == Assuan.cancelledCode || code == Assuan.timeoutCode:
                return nil
            case .error(let code, let message):
                throw AssuanError.refused(code: code, message: message)
            case .inquire:
                try write(Array("CAN".utf8), to: child)
            case .other:
                continue
            }
        }
    }

    /// pinentry's `CONFIRM`: `OK` is yes, a cancel (or time-out) is no.
    public func requestConfirmation(_ description: String) throws -> Bool {
        try confirm(description, ok: "Allow", cancel: "Deny", notOK: nil) == .always
    }

    /// What a person answered to a program asking for a secret it did not store (SPEC.md §17.4).
    public enum Approval: Equatable, Sendable { case always, once, deny }

    /// pinentry's `CONFIRM` with three buttons: `OK` "Always allow", `NOTOK` "Allow once",
    /// Cancel "Deny" (a time-out too).
    public func requestApproval(_ description: String) throws -> Approval {
        try confirm(description, ok: "Always allow", cancel: "Deny", notOK: "Allow once")
    }

    private func confirm(_ description: String, ok: String, cancel: String, notOK: String?) throws -> Approval {
        let child = try start()
        defer {
            try? child.write(Assuan.command("BYE") + [0x0A])
            child.wait()
        }
        try expectOK(child)
        // What a client named (a program's path, an item's label) is shown as text: its control
        // characters escaped, never acted on by the pinentry's screen (SPEC.md §10, §17.4).
        var commands = [Assuan.command("SETTITLE", title), Assuan.command("SETDESC", DisplayText.escaped(description, keepingLineBreaks: true)),
                        Assuan.command("SETOK", ok),
                        Assuan.command("SETCANCEL", cancel)]
        if let notOK { commands.append(Assuan.command("SETNOTOK", notOK)) }
        for command in commands { try send(command, to: child) }
        try write(Assuan.command("CONFIRM"), to: child)
        while true {
            guard let line = try readLine(child) else { throw AssuanError.unavailable("pinentry ended before answering") }
            switch try Assuan.parse(line[...]) {
            case .ok: return .always
            case .error(let code, _) where code == Assuan.notConfirmedCode: return notOK == nil ? .deny : .once
            case .error(let code, _) where code == Assuan.cancelledCode || code == Assuan.timeoutCode: return .deny
            case .error(let code, let message): throw AssuanError.refused(code: code, message: message)
            case .inquire: try write(Array("CAN".utf8), to: child)
            case .data, .other: continue
            }
        }
    }

    private func start() throws -> ChildProcess {
        do {
            return try ChildProcess([program], environment: environment)
        } catch {
            throw AssuanError.unavailable("\(error) (set COFFER_PINENTRY to a pinentry program)")
        }
    }

    /// Sends a setting and requires `OK` (an unknown option is answered with ERR by older
    /// pinentries; settings are advice, so only a broken conversation fails).
    private func send(_ command: [UInt8], to child: ChildProcess) throws {
        try write(command, to: child)
        while true {
            guard let line = try readLine(child) else { throw AssuanError.unavailable("pinentry ended") }
            switch try Assuan.parse(line[...]) {
            case .ok, .error: return
            case .inquire: try write(Array("CAN".utf8), to: child)
            case .data, .other: continue
            }
        }
    }

    private func expectOK(_ child: ChildProcess) throws {
        while true {
            guard let line = try readLine(child) else { throw AssuanError.unavailable("\(program) did not greet (is it a pinentry?)") }
            switch try Assuan.parse(line[...]) {
            case .ok: return
            case .other: continue
            case .error(let code, let message): throw AssuanError.refused(code: code, message: message)
            case .data, .inquire: throw AssuanError.malformed("no greeting")
            }
        }
    }

    private func write(_ line: [UInt8], to child: ChildProcess) throws {
        do { try child.write(line + [0x0A]) } catch { throw AssuanError.unavailable("\(error)") }
    }

    private func readLine(_ child: ChildProcess) throws -> [UInt8]? {
        do { return try child.readLine(limit: Assuan.maximumLineLength + 2) } catch { throw AssuanError.unavailable("\(error)") }
    }
}
