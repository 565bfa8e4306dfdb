import CofferProvider
import CofferSystem

/// The system's authentication through polkit (SPEC.md §8.6): `CheckAuthorization` of action
/// `org.coffer.unlock` (installed by `scripts/install` and the package; `auth_self`: the person
/// proves they are the session's user — their password, a fingerprint, whatever PAM offers)
/// for this very process, with interaction allowed, so the desktop's authentication agent asks.
/// Polkit knows the process by its pid and start time, which the kernel vouches for.
public final class PolkitAuthority: SystemAuthenticator {
    public static let actionID = "org.coffer.unlock"
    /// How long a person may take at the agent's dialog.
    static let timeoutMilliseconds: Int32 = 300_000

    public init() {}

    public func authenticate(reason _: String) -> SystemAuthentication {
        let pid = CurrentProcess.id
        guard let started = KernelProcess.startTime(ofProcess: pid) else { return .unavailable("this process's start time is unreadable") }
        let connection: DBusConnection
        do { connection = try DBusConnection.system() } catch { return .unavailable("no system bus: \(error)") }
        let message = DBusMessage(
            call: "CheckAuthorization", path: "/org/freedesktop/PolicyKit1/Authority", interface: "org.freedesktop.PolicyKit1.Authority",
            destination: "org.freedesktop.PolicyKit1")
        let subject = DBusValue.structure([
            .string("unix-process"),
            .dictionary(key: "s", value: "v", [
                (.string("pid"), .variant(.uint32(UInt32(bitPattern: pid)))), (.string("start-time"), .variant(.uint64(started))),
                (.string("uid"), .variant(.int32(Int32(bitPattern: CurrentUser.id)))),
            ]),
        ])
        // No details: polkit takes them only from trusted callers (root, the action's owner); the
        // dialog shows the action's own message.
        let details = DBusValue.dictionary(key: "s", value: "s", [])
        // Flag 1: AllowUserInteraction.
        message.append([subject, .string(Self.actionID), details, .uint32(1), .string("")])
        let reply: DBusMessage
        do { reply = try connection.call(message, timeout: Self.timeoutMilliseconds) } catch { return .unavailable("polkit did not answer: \(error)") }
        guard case .structure(let fields)? = reply.arguments.first, case .bool(let authorized)? = fields.first else {
            return .unavailable("polkit answered \(reply.signature), not (bba{ss})")
        }
        if authorized { return .authorized }
        if case .bool(true)? = fields.dropFirst().first { return .unavailable("no authentication agent answered") }
        return .denied
    }
}
