import CofferProvider
import CofferHostKit
import FoundationEssentials

/// The process behind a bus connection, as the kernel names it: its pid, the program it runs
/// (`/proc/PID/exe`) and when it started (`/proc/PID/stat`, field 22), which together tell one
/// process from another that got its pid later, and a program from the one it `exec`s.
public struct PeerProcess: Equatable, Sendable {
    public let pid: Int32
    public let executable: String
    public let startTime: UInt64

    public init(pid: Int32, executable: String, startTime: UInt64) {
        self.pid = pid
        self.executable = executable
        self.startTime = startTime
    }
}

/// Approval per application (SPEC.md §17.4). A connection is bound to the program that made
/// its first call; a later call whose process runs another program (it `exec`ed one it was not,
/// or its pid now belongs to another process) is no longer that program, and is asked about as
/// an unidentified one. Reading, changing or deleting an item another program stored needs the
/// person's yes — one question naming every item of the call.
extension SecretServiceProvider {
    /// Who is calling, as approval judges it: the program the connection is bound to, or `nil`
    /// with the reason it cannot be named.
    func caller(_ sender: String) -> (program: String?, reason: String?) {
        guard let now = peerProcess(sender) else { return (nil, "the caller's process cannot be identified") }
        guard let bound = boundPrograms[sender] else {
            boundPrograms[sender] = now
            return (now.executable, nil)
        }
        guard bound == now else {
            return (nil, "the process behind this connection is no longer \(Self.shortened(bound.executable)), which opened it")
        }
        return (now.executable, nil)
    }

    /// Notes the program behind `sender` at its first call (`handle`), before it can exec another.
    func bindOnFirstCall(_ sender: String) {
        guard boundPrograms[sender] == nil, let now = peerProcess(sender) else { return }
        boundPrograms[sender] = now
    }

    enum Access: String {
        case read, change, delete

        var verb: String {
            switch self {
            case .read: "read the secret of"
            case .change: "change"
            case .delete: "delete"
            }
        }
    }

    /// Lets `sender` read, change or delete `records` when it stored each, was allowed always,
    /// or the person allows it now — one pinentry question naming every item it has no right
    /// to, the item and its creator first. Else `AccessDenied`, and the refusal is logged.
    func approve(_ records: [Record], _ access: Access, for sender: String, in vault: Vault) throws {
        guard approvalsRequired, !records.isEmpty else { return }
        let (program, unidentified) = caller(sender)
        let allowed = try program.map { try SecretServiceClients.approved(in: vault).contains($0) } ?? false
        let asking = records.filter { record in
            let creator = record.secretService?.creator ?? ""
            return !(allowed || (program != nil && !creator.isEmpty && creator == program))
        }
        guard !asking.isEmpty else { return }
        let who = program.map { Self.shortened($0) } ?? "A program Coffer cannot name (\(unidentified ?? "unknown"))"
        func item(_ record: Record) -> String {
            let label = record.name.isEmpty ? "an unnamed item" : "“\(Self.clipped(record.name, to: 80))”"
            let creator = record.secretService?.creator ?? ""
            return label + (creator.isEmpty ? "" : " (stored by \(Self.shortened(creator)))")
        }
        let items = asking.prefix(5).map(item).joined(separator: ", ") + (asking.count > 5 ? " and \(asking.count - 5) more" : "")
        let question = "\(asking.count == 1 ? "" : "\(asking.count) items: ")\(items)\n\n\(who) asks to \(access.verb) \(asking.count == 1 ? "it" : "them")."
        guard let pinentry else {
            throw refused("\(who) may not \(access.verb) \(items), and no pinentry can ask (coffer secret-service --no-pinentry)")
        }
        let answer: PinentryInteraction.Approval
        do {
            answer = try pinentry.requestApproval(question)
        } catch {
            throw refused("\(who) may not \(access.verb) \(items): pinentry could not ask (\(error))")
        }
        switch answer {
        case .always:
            // A program that cannot be named is allowed this once only: there is nothing to remember.
            if let program { try SecretServiceClients.approve(program, in: vault) }
        case .once: break
        case .deny: throw refused("the person did not allow \(who) to \(access.verb) \(items)")
        }
    }

    /// `AccessDenied`, told on the service's standard error (the journal under systemd).
    func refused(_ reason: String) -> SecretServiceFault {
        log("refused: " + reason)
        return SecretServiceFault(SecretError.accessDenied, reason)
    }

    /// A long path shortened in the middle (`/usr/lib/…/firefox-esr`): the program's name stays
    /// whole, and no path can push the item out of a pinentry's text (Assuan lines end at 1,000
    /// bytes).
    static func shortened(_ path: String, to limit: Int = 96) -> String {
        guard path.count > limit else { return path }
        let tail = path.split(separator: "/").last.map { String($0.suffix(limit / 2)) } ?? ""
        return String(path.prefix(limit - tail.count - 2)) + "…/" + tail
    }

    static func clipped(_ text: String, to limit: Int) -> String {
        text.count > limit ? String(text.prefix(limit - 1)) + "…" : text
    }
}
