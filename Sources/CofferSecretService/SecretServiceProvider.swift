import CofferDBus
import CofferProvider
import CofferHostKit
import FoundationEssentials

/// Coffer as the desktop's keyring: the freedesktop Secret Service's `Service`, `Collection`,
/// `Item`, `Session` and `Prompt` objects (SPEC.md §17), answered from the vault. A host of the
/// provider like the browser host and the SSH agent: it enters through `HostSession`, lists while
/// locked from the identity store, reads a secret only from an unlocked vault, and unlocks only
/// through a `Prompt` that asks pinentry — never silently.
///
/// One call at a time, on the bus loop's thread. `handle` answers a call and may hand back work
/// to run after the answer is sent (a prompt: the specification has the client call `Prompt`,
/// then wait for `Completed`).
public final class SecretServiceProvider {
    public struct Response {
        public var reply: DBusMessage?
        public var after: (() -> Void)?
    }

    let host: HostSession
    /// Asks for approval per application (SPEC.md §17.4); `nil`: nobody to ask, so a program
    /// reading another's secret is refused.
    let pinentry: PinentryInteraction?
    /// Whether a program must be approved to read a secret it did not store (on by default).
    public var approvalsRequired = true
    /// Sends a signal.
    let emit: (DBusMessage) -> Void
    /// The process behind a bus name (its pid from the bus daemon, the rest from `/proc`).
    let peerProcess: (String) -> PeerProcess?
    /// Each connection's program, as it was at its first call (approval, SPEC.md §17.4).
    var boundPrograms: [String: PeerProcess] = [:]
    /// Where refusals and their reasons are told: the service's standard error (the journal
    /// under systemd). A request never fails silently (SPEC.md §17).
    public var log: (String) -> Void = { _ in }

    var sessions: [Int: SecretSession] = [:]
    var prompts: [Int: PendingPrompt] = [:]
    private var nextNumber = 1
    /// Aliases to collection names; `default` is the login collection (SPEC.md §17.1).
    var aliases: [String: String] = ["default": SecretServiceMember.defaultCollection]
    /// Collections made by `CreateCollection`, with their labels (until the service stops).
    var createdCollections: [String: String] = [:]
    private var lastLocked: Bool?
    /// The vault, opened once: a call costs what its own work costs, not a header read and a
    /// key derivation (SPEC.md §17.3 still holds — its lock state is checked on every call).
    private var vault: Vault?
    /// Every secret item, as of one index generation: what `Collections` and a collection's
    /// `Items` list, read again only after a change.
    private var allItems: (generation: UInt64, items: [SecretItemReference])?

    struct PendingPrompt {
        let owner: String
        /// Runs once the vault is unlocked; its value is `Completed`'s result.
        let action: (Vault) throws -> DBusValue
        /// `Completed`'s result when dismissed.
        let emptyResult: DBusValue
    }

    public init(host: HostSession, pinentry: PinentryInteraction?, emit: @escaping (DBusMessage) -> Void,
                peerProcess: @escaping (String) -> PeerProcess?) {
        self.host = host
        self.pinentry = pinentry
        self.emit = emit
        self.peerProcess = peerProcess
    }

    // MARK: Dispatch

    public func handle(_ message: DBusMessage) -> Response {
        guard message.kind == .methodCall else { return Response() }
        bindOnFirstCall(message.sender)
        do {
            let (values, after) = try dispatch(message)
            return Response(reply: message.expectsReply ? message.reply(values) : nil, after: after)
        } catch let fault as SecretServiceFault {
            return Response(reply: message.errorReply(fault.name, fault.message))
        } catch VaultError.locked {
            log("refused \(message.member): the vault is locked")
            return Response(reply: message.errorReply(SecretError.isLocked, "the vault is locked"))
        } catch {
            log("\(message.member) failed: \(error)")
            return Response(reply: message.errorReply(SecretError.failed, "\(error)"))
        }
    }

    typealias Outcome = (values: [DBusValue], after: (() -> Void)?)

    private func dispatch(_ message: DBusMessage) throws -> Outcome {
        let member = message.member, interface = message.interface
        if interface == "org.freedesktop.DBus.Introspectable" || (interface.isEmpty && member == "Introspect") {
            return ([.string(SecretServiceIntrospection.xml(for: message.path))], nil)
        }
        if interface == "org.freedesktop.DBus.Peer" {
            guard member == "Ping" else { throw SecretServiceFault(SecretError.unknownMethod, "no method \(member)") }
            return ([], nil)
        }
        guard let object = SecretObjectPath(message.path, alias: { self.aliases[$0] }) else {
            throw SecretServiceFault("org.freedesktop.DBus.Error.UnknownObject", "no object at \(message.path)")
        }
        if interface == "org.freedesktop.DBus.Properties" { return (try properties(message, object), nil) }
        switch object {
        case .service: return try serviceCall(message)
        case .collection(let name): return try collectionCall(message, name)
        case .item(let collection, let id): return try itemCall(message, collection: collection, id: id)
        case .session(let number):
            guard member == "Close" else { throw SecretServiceFault(SecretError.unknownMethod, "a session has Close only") }
            try expect(message, "")
            guard sessions[number]?.owner == message.sender else { throw SecretServiceFault(SecretError.noSession, "no such session") }
            sessions[number] = nil
            return ([], nil)
        case .prompt(let number):
            guard let prompt = prompts[number], prompt.owner == message.sender else {
                throw SecretServiceFault(SecretError.noSuchObject, "no such prompt")
            }
            switch member {
            case "Prompt":
                try expect(message, "s")
                prompts[number] = nil
                return ([], { self.run(prompt, number: number) })
            case "Dismiss":
                try expect(message, "")
                prompts[number] = nil
                return ([], { self.complete(number, dismissed: true, result: prompt.emptyResult) })
            default: throw SecretServiceFault(SecretError.unknownMethod, "a prompt has Prompt and Dismiss")
            }
        }
    }

    /// Refuses a call whose arguments are not of `signature` (InvalidArgs, as the bus's own
    /// objects answer).
    func expect(_ message: DBusMessage, _ signature: String) throws {
        guard message.signature == signature else {
            throw SecretServiceFault(SecretError.invalidArgs, "\(message.member) takes (\(signature)), not (\(message.signature))")
        }
    }

    // MARK: The service

    private func serviceCall(_ message: DBusMessage) throws -> Outcome {
        let arguments = message.arguments
        switch message.member {
        case "OpenSession":
            try expect(message, "sv")
            guard case .string(let algorithm) = arguments[0], case .variant(let input) = arguments[1] else { throw invalid("OpenSession") }
            guard sessions.values.count(where: { $0.owner == message.sender }) < Self.maximumPerConnection else {
                throw SecretServiceFault(SecretError.limitsExceeded, "at most \(Self.maximumPerConnection) open sessions per connection")
            }
            let number = allocate()
            let path = SecretObjectPath.session(number).path
            switch algorithm {
            case SecretSession.plain:
                sessions[number] = SecretSession(owner: message.sender, path: path, cipher: nil)
                return ([.variant(.string("")), .objectPath(path)], nil)
            case SecretSession.diffieHellman:
                guard let peer = input.bytesValue else { throw invalid("the DH input is the client's public key (ay)") }
                let cipher: SecretSessionCipher
                do { cipher = try SecretSessionCipher(peerPublicKey: peer) } catch {
                    throw SecretServiceFault(SecretError.invalidArgs, "not a Diffie-Hellman public key of the 1024-bit group")
                }
                sessions[number] = SecretSession(owner: message.sender, path: path, cipher: cipher)
                return ([.variant(.bytes(cipher.publicKey)), .objectPath(path)], nil)
            default:
                throw SecretServiceFault(SecretError.notSupported, "algorithm \(algorithm.prefix(64)) is not supported")
            }
        case "SearchItems":
            try expect(message, "a{ss}")
            let found = try search(attributes(arguments[0]), in: nil)
            let vault = try openVault()
            let paths = found.map { SecretObjectPath.item(collection: $0.collection, $0.recordID).path }
            return vault.isUnlocked ? ([.paths(paths), .paths([])], nil) : ([.paths([]), .paths(paths)], nil)
        case "Unlock":
            try expect(message, "ao")
            let objects = arguments[0].objectPaths ?? []
            if try openVault().isUnlocked { return ([.paths(objects), .objectPath(SecretObjectPath.none)], nil) }
            try requirePinentry(for: "Unlock")
            let prompt = try makePrompt(owner: message.sender, emptyResult: .paths([])) { _ in .paths(objects) }
            return ([.paths([]), .objectPath(prompt)], nil)
        case "Lock":
            try expect(message, "ao")
            host.lock(try openVault())
            return ([arguments[0], .objectPath(SecretObjectPath.none)], { self.checkLockState() })
        case "GetSecrets":
            try expect(message, "aoo")
            let session = try owned(session: arguments[1], by: message.sender)
            let vault = try unlockedVault()
            var found: [(path: String, record: Record)] = []
            for path in arguments[0].objectPaths ?? [] {
                guard case .item(let collection, let id)? = SecretObjectPath(path, alias: { self.aliases[$0] }),
                      let record = try? secretRecord(id, collection: collection, in: vault)
                else { continue }  // the specification: items that do not exist are left out
                found.append((path, record))
            }
            // One question naming every item the caller has no right to: an answer about one
            // item never releases another (SPEC.md §17.4).
            try approve(found.map(\.record), .read, for: message.sender, in: vault)
            let entries = try found.map { (DBusValue.objectPath($0.path), try secretValue($0.record, session: session)) }
            return ([.dictionary(key: "o", value: "(oayays)", entries)], nil)
        case "ReadAlias":
            try expect(message, "s")
            guard case .string(let name) = arguments[0], let collection = aliases[name] else { return ([.objectPath(SecretObjectPath.none)], nil) }
            return ([.objectPath(SecretObjectPath.collection(collection).path)], nil)
        case "SetAlias":
            try expect(message, "so")
            guard case .string(let name) = arguments[0], SecretServiceMember.isValidCollectionName(name),
                  let path = arguments[1].objectPathValue
            else { throw invalid("an alias is a name of a-z, 0-9 and _") }
            if path == SecretObjectPath.none {
                aliases[name] = nil
            } else {
                guard case .collection(let collection)? = SecretObjectPath(path, alias: { self.aliases[$0] }),
                      try collectionNames().contains(collection)
                else { throw SecretServiceFault(SecretError.noSuchObject, "no such collection") }
                aliases[name] = collection
            }
            return ([], nil)
        case "CreateCollection":
            try expect(message, "a{sv}s")
            guard let properties = arguments[0].properties, case .string(let alias) = arguments[1] else { throw invalid("CreateCollection") }
            if !alias.isEmpty, let existing = aliases[alias] {
                return ([.objectPath(SecretObjectPath.collection(existing).path), .objectPath(SecretObjectPath.none)], nil)
            }
            let label = properties["org.freedesktop.Secret.Collection.Label"]?.stringValue ?? ""
            let name = try uniqueCollectionName(for: label)
            createdCollections[name] = label
            if !alias.isEmpty {
                guard SecretServiceMember.isValidCollectionName(alias) else { throw invalid("an alias is a name of a-z, 0-9 and _") }
                aliases[alias] = name
            }
            let path = SecretObjectPath.collection(name).path
            return ([.objectPath(path), .objectPath(SecretObjectPath.none)], {
                self.signal(SecretObjectPath.root, "org.freedesktop.Secret.Service", "CollectionCreated", [.objectPath(path)])
            })
        default:
            throw SecretServiceFault(SecretError.unknownMethod, "the service has no method \(message.member.prefix(64))")
        }
    }

    // MARK: Prompts

    /// Sessions, and prompts, one connection may hold at once: a client opening them in a loop
    /// gets `LimitsExceeded`, not the service's memory.
    static let maximumPerConnection = 64

    func makePrompt(owner: String, emptyResult: DBusValue, action: @escaping (Vault) throws -> DBusValue) throws -> String {
        guard prompts.values.count(where: { $0.owner == owner }) < Self.maximumPerConnection else {
            throw SecretServiceFault(SecretError.limitsExceeded, "at most \(Self.maximumPerConnection) pending prompts per connection")
        }
        let number = allocate()
        prompts[number] = PendingPrompt(owner: owner, action: action, emptyResult: emptyResult)
        return SecretObjectPath.prompt(number).path
    }

    /// A call that can only go on once the vault is unlocked, with nobody who can be asked:
    /// refused at once with `IsLocked` and the reason, never a prompt dismissed in no time.
    func requirePinentry(for call: String) throws {
        guard pinentry == nil else { return }
        log("refused \(call): the vault is locked and no pinentry may ask for the master password (--no-pinentry)")
        throw SecretServiceFault(SecretError.isLocked, "the vault is locked and no pinentry may ask for the master password: run 'coffer unlock'")
    }

    /// Asks for the master password through pinentry (three attempts; a keyring session is
    /// started, as `coffer unlock` does), then does what the prompt was for. What became of it is
    /// told on the service's standard error when it is not done.
    private func run(_ prompt: PendingPrompt, number: Int) {
        do {
            let vault = try openVault()
            let outcome = try host.unlock(vault, reason: "for an application's request to the keyring")
            guard outcome == .unlocked else {
                log("an unlock prompt was dismissed: \(outcome == .cancelled ? "cancelled in pinentry" : outcome == .wrongPassword ? "three wrong master passwords" : "nobody could be asked")")
                complete(number, dismissed: true, result: prompt.emptyResult)
                return
            }
            let result = try prompt.action(vault)
            complete(number, dismissed: false, result: result)
        } catch {
            log("an unlock prompt failed: \(error)")
            complete(number, dismissed: true, result: prompt.emptyResult)
        }
        checkLockState()
    }

    private func complete(_ number: Int, dismissed: Bool, result: DBusValue) {
        signal(SecretObjectPath.prompt(number).path, "org.freedesktop.Secret.Prompt", "Completed", [.bool(dismissed), .variant(result)])
    }

    // MARK: Bookkeeping

    /// A connection left the bus: its sessions and prompts go with it.
    public func peerVanished(_ name: String) {
        sessions = sessions.filter { $0.value.owner != name }
        prompts = prompts.filter { $0.value.owner != name }
        boundPrograms[name] = nil
    }

    /// Emits `Locked` changes when the vault was locked or unlocked elsewhere (`coffer lock`,
    /// `coffer unlock`, a session's idle timeout): called by the loop every second.
    public func checkLockState() {
        guard let vault = try? openVault() else { return }
        let locked = !vault.isUnlocked
        defer { lastLocked = locked }
        guard let last = lastLocked, last != locked, let names = try? collectionNames() else { return }
        for name in names.sorted() {
            let path = SecretObjectPath.collection(name).path
            signal(path, "org.freedesktop.DBus.Properties", "PropertiesChanged", [
                .string("org.freedesktop.Secret.Collection"), .variants([("Locked", .bool(locked))]), .array(element: "s", []),
            ])
            signal(SecretObjectPath.root, "org.freedesktop.Secret.Service", "CollectionChanged", [.objectPath(path)])
        }
    }

    func signal(_ path: String, _ interface: String, _ member: String, _ values: [DBusValue]) {
        let message = DBusMessage(signal: member, path: path, interface: interface)
        message.append(values)
        emit(message)
    }

    private func allocate() -> Int {
        defer { nextNumber += 1 }
        return nextNumber
    }

    func owned(session value: DBusValue, by sender: String) throws -> SecretSession {
        guard case .session(let number)? = value.objectPathValue.flatMap({ SecretObjectPath($0, alias: { _ in nil }) }),
              let session = sessions[number], session.owner == sender
        else { throw SecretServiceFault(SecretError.noSession, "no such session of this connection") }
        return session
    }

    /// The vault, unlocked exactly when a keyring session is live (§8.4): a session that ended
    /// (`coffer lock`, the idle timeout) locks it here too before anything is read.
    func openVault() throws -> Vault {
        // Taking the key from a live session is not itself a use: `unlockedVault` re-arms it for
        // a read or a change; a search or a property read does not (SPEC.md §8.4).
        let vault = try self.vault ?? host.openVaultWithoutUse()
        self.vault = vault
        host.unlockPolicy.followSession(vault)
        return vault
    }

    /// Every secret item (the listing), cached by index generation.
    func everySecretItem(in vault: Vault) throws -> [SecretItemReference] {
        let generation = try vault.indexGeneration()
        if let allItems, allItems.generation == generation { return allItems.items }
        let items = try CredentialIdentityStore(vault: vault).secretItems(matching: [:])
        allItems = (generation, items)
        return items
    }

    /// The vault for a read or a change: unlocked, else `IsLocked`. An application's use counts
    /// as use of the keyring session, pushing its idle timeout back as a CLI command's does.
    func unlockedVault() throws -> Vault {
        let vault = try openVault()
        guard vault.isUnlocked else { throw SecretServiceFault(SecretError.isLocked, "the vault is locked; call Unlock first") }
        noteUse(of: vault)
        return vault
    }

    /// A secret is read or changed: re-arms the keyring session's idle timeout (SPEC.md §17).
    func noteUse(of vault: Vault) {
        host.unlockPolicy.rearmSession(of: vault)
    }

    func invalid(_ what: String) -> SecretServiceFault { SecretServiceFault(SecretError.invalidArgs, "invalid arguments to \(what)") }

    /// An `a{ss}` within the bounds of SPEC.md §6.5.
    func attributes(_ value: DBusValue) throws -> [String: String] {
        guard let attributes = value.stringDictionary, case .dictionary(_, _, let entries) = value, entries.count == attributes.count,
              SecretServiceMember.areValidAttributes(attributes)
        else {
            throw SecretServiceFault(SecretError.invalidArgs, "attributes: at most \(SecretServiceMember.maximumAttributes) distinct names, each value at most \(SecretServiceMember.maximumAttributeValueBytes) bytes")
        }
        return attributes
    }

    /// Collection names from a label: lower case, runs of other characters as `_`, made unique.
    private func uniqueCollectionName(for label: String) throws -> String {
        var base = String(label.lowercased().unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (("a"..."z").contains(Character(scalar)) || ("0"..."9").contains(Character(scalar))) ? Character(scalar) : "_"
        }).prefix(48).description
        if base.isEmpty || base.allSatisfy({ $0 == "_" }) { base = "collection" }
        let taken = try collectionNames().union(aliases.keys)
        var name = base, counter = 2
        while taken.contains(name) {
            name = "\(base)_\(counter)"
            counter += 1
        }
        return name
    }
}
