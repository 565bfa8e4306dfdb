import Coffer
import Glibc

/// The host process: checks its caller, then answers framed requests on stdin until the
/// browser closes the connection (one long-lived `connectNative` port).
public enum BrowserHostMain {
    public static func run(_ arguments: [String], environment: Environment = .process) -> Int32 {
        ProcessHardening.apply()
        // An unknown caller is refused before the vault is touched.
        guard BrowserExtension.callerIsCoffer(arguments) else {
            let answer = BrowserHost.failure(.forbidden("this host serves only Coffer's browser extension"), id: .null)
            if let frame = try? NativeMessaging.frame(answer) { try? NativeMessaging.write(frame, to: 1) }
            return 1
        }
        let host = BrowserHost(
            container: container(arguments, environment), configuration: .standard(environment: environment),
            sessions: KeyringSessions(), interaction: PinentryInteraction(environment: environment))
        let reader = NativeMessaging.Reader(fd: 0)
        while true {
            let answer: JSONValue
            do {
                switch try reader.next() {
                case .end: return 0
                case .tooLarge(let length): answer = BrowserHost.failure(.tooLarge(length), id: .null)
                case .message(let bytes): answer = host.respond(to: bytes)
                }
            } catch {
                return 0  // the browser went away in the middle of a message
            }
            let frame = (try? NativeMessaging.frame(answer))
                ?? (try? NativeMessaging.frame(BrowserHost.failure(.tooLarge(NativeMessaging.maximumLength + 1), id: .null))) ?? []
            do { try NativeMessaging.write(frame, to: 1) } catch { return 0 }
        }
    }

    /// `--container DIR` or `--group ID` (what `coffer browser install --container` bakes into
    /// its wrapper), else `$COFFER_CONTAINER`, else the default group, as the CLI resolves it.
    static func container(_ arguments: [String], _ environment: Environment) -> GroupContainer {
        if let index = arguments.firstIndex(of: "--container"), index + 1 < arguments.count {
            return GroupContainer(path: arguments[index + 1])
        }
        if let index = arguments.firstIndex(of: "--group"), index + 1 < arguments.count,
           let container = try? GroupContainer(groupIdentifier: arguments[index + 1], environment: environment) {
            return container
        }
        if let path = environment["COFFER_CONTAINER"], !path.isEmpty { return GroupContainer(path: path) }
        return (try? GroupContainer(groupIdentifier: GroupContainer.defaultGroupIdentifier, environment: environment))
            ?? GroupContainer(path: "/nonexistent")
    }
}
