/// The system's own check that the person at this session is who they are (SPEC.md §8.6): on
/// Linux, polkit's `CheckAuthorization` for `org.coffer.unlock`, answered by the desktop's
/// authentication agent (the account password, a fingerprint, whatever PAM offers). A host that
/// can reach the system bus gives one to its unlock policy; without one, system authentication
/// is simply not offered.
public protocol SystemAuthenticator: AnyObject {
    /// Asks, letting the agent interact with the person; `reason` is shown where the agent can.
    func authenticate(reason: String) -> SystemAuthentication
}

/// What the system answered.
public enum SystemAuthentication: Equatable, Sendable {
    case authorized
    /// Refused, or the person cancelled the agent's dialog.
    case denied
    /// Nobody could answer (no system bus, no polkit, no authentication agent), and why.
    case unavailable(String)
}
