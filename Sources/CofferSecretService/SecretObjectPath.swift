import CofferDBus
import CofferProvider
import CofferHostKit

/// The objects of the Secret Service API and their paths (SPEC.md §17.1): the service, a
/// collection (`/org/freedesktop/secrets/collection/login`, or through an alias
/// `/org/freedesktop/secrets/aliases/default`), an item (the collection's path and the record id),
/// a session and a prompt.
enum SecretObjectPath: Equatable {
    case service
    case collection(String)
    case item(collection: String, RecordID)
    case session(Int)
    case prompt(Int)

    static let root = "/org/freedesktop/secrets"
    /// "No object", as the specification spells it (no prompt needed, no alias).
    static let none = "/"

    /// The object `path` names, with aliases resolved by `alias`; `nil` for a path that names
    /// none (a malformed id, an unknown alias).
    init?(_ path: String, alias: (String) -> String?) {
        if path == Self.root { self = .service; return }
        guard path.hasPrefix(Self.root + "/") else { return nil }
        let parts = path.dropFirst(Self.root.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("session", 2): guard let number = Int(parts[1]) else { return nil }; self = .session(number)
        case ("prompt", 2): guard let number = Int(parts[1]) else { return nil }; self = .prompt(number)
        case ("collection", 2), ("collection", 3), ("aliases", 2), ("aliases", 3):
            let collection = parts[0] == "aliases" ? alias(parts[1]) : parts[1]
            guard let collection, SecretServiceMember.isValidCollectionName(collection) else { return nil }
            if parts.count == 2 { self = .collection(collection); return }
            guard let id = try? RecordID(hex: parts[2]) else { return nil }
            self = .item(collection: collection, id)
        default: return nil
        }
    }

    var path: String {
        switch self {
        case .service: Self.root
        case .collection(let name): Self.root + "/collection/" + name
        case .item(let collection, let id): Self.root + "/collection/" + collection + "/" + id.hex
        case .session(let number): Self.root + "/session/\(number)"
        case .prompt(let number): Self.root + "/prompt/\(number)"
        }
    }
}

/// The error names of the specification and of D-Bus itself that the service answers with.
enum SecretError {
    static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
    static let noSession = "org.freedesktop.Secret.Error.NoSession"
    static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let failed = "org.freedesktop.DBus.Error.Failed"
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
}

/// A call refused with a D-Bus error: thrown inside a handler, answered by the loop.
struct SecretServiceFault: Error {
    let name: String
    let message: String
    init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }
}
