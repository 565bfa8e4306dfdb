import CofferDBus
import CofferProvider
import CofferHostKit
import FoundationEssentials

/// `coffer secret-service`'s loop: owns `org.freedesktop.secrets` on the session bus and hands
/// each call to the `SecretServiceProvider`, one at a time (a pinentry prompt holds the others,
/// as the SSH agent's do). Connections that leave the bus lose their sessions and prompts; the
/// vault's lock state is looked at every second so `coffer lock` shows as `Locked` at once.
public final class SecretServiceBus {
    public static let busName = "org.freedesktop.secrets"

    public enum StartError: Error, CustomStringConvertible {
        case noBus(DBusError)
        case nameTaken(owner: String, replaceRefused: Bool)

        public var description: String {
            switch self {
            case .noBus(let error): "no session bus: \(error)"
            case .nameTaken(let owner, let refused):
                "another Secret Service provider owns \(SecretServiceBus.busName)\(owner.isEmpty ? "" : " (\(owner))")"
                    + (refused ? ", and it does not let another take the name over" : "")
            }
        }
    }

    let connection: DBusConnection
    public let provider: SecretServiceProvider

    /// Connects and takes the name (`replace`: from another provider that allows it, as
    /// gnome-keyring and KeePassXC do).
    public init(host: HostSession, pinentry: PinentryInteraction?, replace: Bool) throws(StartError) {
        do { connection = try DBusConnection.session() } catch { throw .noBus(error) }
        let connection = connection
        provider = SecretServiceProvider(host: host, pinentry: pinentry, emit: { connection.send($0) }, peerProcess: { peer in
            connection.processID(of: peer).flatMap(Self.process)
        })
        do {
            try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
            try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost'")
            if try connection.requestName(Self.busName, replace: replace) == .taken {
                throw StartError.nameTaken(owner: Self.describeOwner(connection), replaceRefused: replace)
            }
        } catch let error as StartError {
            throw error
        } catch {
            throw .noBus(error as? DBusError ?? DBusError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)"))
        }
    }

    /// Serves until SIGINT, SIGTERM or SIGHUP, the bus going away, or another provider taking
    /// the name with `--replace`. Returns why it stopped.
    public func serve() throws -> String {
        let signals = try SignalDescriptor(SignalDescriptor.endOfService)
        var lastCheck = 0.0
        provider.checkLockState()
        while true {
            if let signal = signals.next() { return "stopped by signal \(signal.signal)" }
            guard let messages = connection.receive(timeout: 250) else { return "the session bus went away" }
            for message in messages {
                if message.kind == .signal {
                    let arguments = message.arguments
                    if message.member == "NameOwnerChanged", arguments.count == 3, case .string(let name) = arguments[0],
                       case .string("") = arguments[2] {
                        provider.peerVanished(name)
                    } else if message.member == "NameLost", case .string(Self.busName)? = arguments.first {
                        return "another provider took \(Self.busName)"
                    }
                    continue
                }
                let response = provider.handle(message)
                if let reply = response.reply { connection.send(reply) }
                response.after?()
            }
            let now = Date().timeIntervalSince1970
            if now - lastCheck >= 1 {
                lastCheck = now
                provider.checkLockState()
            }
        }
    }

    /// A process as the kernel describes it: its program and its start time.
    static func process(_ pid: Int32) -> PeerProcess? {
        guard let executable = KernelProcess.executable(ofProcess: pid), let started = KernelProcess.startTime(ofProcess: pid) else { return nil }
        return PeerProcess(pid: pid, executable: executable, startTime: started)
    }

    private static func describeOwner(_ connection: DBusConnection) -> String {
        guard let owner = connection.owner(of: busName), let pid = connection.processID(of: owner), let program = KernelProcess.executable(ofProcess: pid)
        else { return "" }
        return "\(program), pid \(pid)"
    }
}
