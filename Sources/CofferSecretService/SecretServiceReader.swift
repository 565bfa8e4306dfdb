import CofferDBus
import CofferProvider
import CofferHostKit
import CofferInterchange
import FoundationEssentials

/// Reads every item of the Secret Service provider that owns the name now (gnome-keyring,
/// KWallet's bridge, KeePassXC), as a client: `coffer import --from secret-service`. Locked
/// collections are unlocked through the provider's own prompt; secrets travel in a
/// Diffie-Hellman session, as libsecret's do.
public enum SecretServiceReader {
    public enum ReadError: Error, CustomStringConvertible {
        case bus(DBusError)
        case noProvider
        case isCoffer
        case dismissed(collection: String)
        case malformed(String)

        public var description: String {
            switch self {
            case .bus(let error): "\(error)"
            case .noProvider: "no Secret Service provider runs on the session bus"
            case .isCoffer: "the Secret Service provider on the bus is Coffer itself"
            case .dismissed(let collection): "unlocking the collection \(collection) was dismissed"
            case .malformed(let what): "the provider answered \(what) in an unexpected form"
            }
        }
    }

    static let service = SecretServiceBus.busName

    /// - Parameter ownExecutable: this program, to refuse importing from Coffer's own service.
    public static func readAll(ownExecutable: String?) throws(ReadError) -> [SecretServiceExportedItem] {
        do {
            return try read(ownExecutable: ownExecutable)
        } catch let error as ReadError {
            throw error
        } catch let error as DBusError {
            throw error.name == "org.freedesktop.DBus.Error.ServiceUnknown" ? .noProvider : .bus(error)
        } catch {
            throw .malformed("\(error)")
        }
    }

    private static func read(ownExecutable: String?) throws -> [SecretServiceExportedItem] {
        let connection = try DBusConnection.session()
        try connection.addMatch("type='signal',interface='org.freedesktop.Secret.Prompt',member='Completed'")
        guard let ownerName = connection.owner(of: service) else { throw ReadError.noProvider }
        if let ownExecutable, let pid = connection.processID(of: ownerName), KernelProcess.executable(ofProcess: pid) == ownExecutable {
            throw ReadError.isCoffer
        }
        let (publicKey, complete) = try SecretSessionCipher.client()
        let opened = try call(connection, SecretObjectPath.root, "org.freedesktop.Secret.Service", "OpenSession",
                              [.string(SecretSession.diffieHellman), .variant(.bytes(publicKey))])
        guard opened.count == 2, let peer = opened[0].bytesValue, case .objectPath(let sessionPath) = opened[1] else { throw ReadError.malformed("OpenSession") }
        let cipher = try complete(peer)
        let session = SecretSession(owner: "", path: sessionPath, cipher: cipher)
        guard let collections = try property(connection, SecretObjectPath.root, "org.freedesktop.Secret.Service", "Collections").objectPaths else {
            throw ReadError.malformed("Collections")
        }
        var items: [SecretServiceExportedItem] = []
        for collection in collections {
            let name = String(collection.split(separator: "/").last ?? "")
            if try property(connection, collection, "org.freedesktop.Secret.Collection", "Locked").boolValue == true {
                try unlock(collection, name: name, connection)
            }
            guard let paths = try property(connection, collection, "org.freedesktop.Secret.Collection", "Items").objectPaths else {
                throw ReadError.malformed("Items")
            }
            guard !paths.isEmpty else { continue }
            let secrets = try call(connection, SecretObjectPath.root, "org.freedesktop.Secret.Service", "GetSecrets",
                                   [.paths(paths), .objectPath(sessionPath)])
            guard case .dictionary(_, _, let entries)? = secrets.first else { throw ReadError.malformed("GetSecrets") }
            for (key, value) in entries {
                guard let path = key.objectPathValue, case .structure(let fields) = value else { throw ReadError.malformed("a secret") }
                let (secret, contentType) = try session.decode(fields)
                let properties = try call(connection, path, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.freedesktop.Secret.Item")])
                guard let values = properties.first?.properties else { throw ReadError.malformed("an item's properties") }
                items.append(SecretServiceExportedItem(
                    collection: name, label: values["Label"]?.stringValue ?? "", attributes: values["Attributes"]?.stringDictionary ?? [:],
                    secret: secret, contentType: contentType, created: date(values["Created"]), modified: date(values["Modified"])))
            }
        }
        _ = try? call(connection, sessionPath, "org.freedesktop.Secret.Session", "Close", [])
        return items
    }

    /// Unlock, then the provider's prompt (its own dialog), waiting up to five minutes for `Completed`.
    private static func unlock(_ collection: String, name: String, _ connection: DBusConnection) throws {
        let answer = try call(connection, SecretObjectPath.root, "org.freedesktop.Secret.Service", "Unlock", [.paths([collection])])
        guard answer.count == 2, case .objectPath(let prompt) = answer[1] else { throw ReadError.malformed("Unlock") }
        guard prompt != SecretObjectPath.none else { return }
        _ = try call(connection, prompt, "org.freedesktop.Secret.Prompt", "Prompt", [.string("")])
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline {
            for message in connection.receive(timeout: 250) ?? [] where message.kind == .signal && message.path == prompt && message.member == "Completed" {
                guard case .bool(false)? = message.arguments.first else { throw ReadError.dismissed(collection: name) }
                return
            }
        }
        throw ReadError.dismissed(collection: name)
    }

    private static func property(_ connection: DBusConnection, _ path: String, _ interface: String, _ name: String) throws -> DBusValue {
        guard case .variant(let value)? = try call(connection, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]).first
        else { throw ReadError.malformed(name) }
        return value
    }

    private static func call(_ connection: DBusConnection, _ path: String, _ interface: String, _ member: String, _ values: [DBusValue]) throws -> [DBusValue] {
        let message = DBusMessage(call: member, path: path, interface: interface, destination: service)
        message.append(values)
        let reply = try connection.call(message)
        return reply.arguments
    }

    private static func date(_ value: DBusValue?) -> Date? {
        guard case .uint64(let seconds)? = value, seconds > 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
