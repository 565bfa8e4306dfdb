import CofferDBus
import CofferProvider
import CofferHostKit

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
        // Which vault, the CLI's way (HostSession); a container that cannot be named (no home
        // directory for the default group) answers every request with the reason.
        let host: BrowserHost
        do {
            // The host lives as long as the extension's port: it keeps the buckets it read.
            var configuration = VaultConfiguration.standard(environment: environment)
            configuration.identityBucketCache = IdentityBucketCache()
            let session = HostSession(
                container: try container(arguments, environment), configuration: configuration,
                sessions: KeyringSessions(), interaction: PinentryInteraction(environment: environment))
            session.unlockPolicy.systemAuthenticator = PolkitAuthority()  // quick unlock by the system's authentication
            host = BrowserHost(session: session)
        } catch {
            return serve { _ in BrowserHost.failure(.failed("no vault container: \(error)"), id: .null) }
        }
        return serve({ host.respond(to: $0) }, betweenRequests: host)
    }

    /// Answers framed requests on stdin with `answer` until the browser closes the connection;
    /// the time between requests is `host`'s, to keep its vault page tables current.
    private static func serve(_ answer: ([UInt8]) -> JSONValue, betweenRequests host: BrowserHost? = nil) -> Int32 {
        let reader = NativeMessaging.Reader(fd: 0)
        while true {
            host?.waitForRequest(on: 0)
            let reply: JSONValue
            do {
                switch try reader.next() {
                case .end: return 0
                case .tooLarge(let length): reply = BrowserHost.failure(.tooLarge(length), id: .null)
                case .message(let bytes): reply = answer(bytes)
                }
            } catch {
                return 0  // the browser went away in the middle of a message
            }
            let frame = (try? NativeMessaging.frame(reply))
                ?? (try? NativeMessaging.frame(BrowserHost.failure(.tooLarge(NativeMessaging.maximumLength + 1), id: .null))) ?? []
            do { try NativeMessaging.write(frame, to: 1) } catch { return 0 }
        }
    }

    /// `--container DIR` or `--group ID` (what `coffer browser install --container` bakes into
    /// its wrapper), else `$COFFER_CONTAINER`, else the default group: `HostSession`'s order.
    static func container(_ arguments: [String], _ environment: Environment) throws -> GroupContainer {
        func value(_ option: String) -> String? {
            arguments.firstIndex(of: option).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        return try HostSession.resolveContainer(path: value("--container"), group: value("--group"), environment: environment)
    }
}
