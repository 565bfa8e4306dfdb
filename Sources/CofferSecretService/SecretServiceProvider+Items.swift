import CofferDBus
import CofferProvider
import CofferHostKit
import FoundationEssentials

extension SecretServiceProvider {
    // MARK: Collections

    func collectionCall(_ message: DBusMessage, _ name: String) throws -> Outcome {
        guard try collectionNames().contains(name) else { throw SecretServiceFault(SecretError.noSuchObject, "no such collection") }
        let arguments = message.arguments
        switch message.member {
        case "SearchItems":
            try expect(message, "a{ss}")
            let paths = try search(attributes(arguments[0]), in: name).map { SecretObjectPath.item(collection: name, $0.recordID).path }
            return ([.paths(paths)], nil)
        case "CreateItem":
            try expect(message, "a{sv}(oayays)b")
            guard let properties = arguments[0].properties, case .structure(let fields) = arguments[1], case .bool(let replace) = arguments[2]
            else { throw invalid("CreateItem") }
            let session = try owned(session: fields[0], by: message.sender)
            let (secret, contentType) = try session.decode(fields)
            guard secret.count <= SecretServiceMember.maximumSecretBytes else {
                throw SecretServiceFault(SecretError.invalidArgs, "a secret is at most \(SecretServiceMember.maximumSecretBytes / 1024) KiB")
            }
            let label = properties["org.freedesktop.Secret.Item.Label"]?.stringValue ?? ""
            let attributes = try properties["org.freedesktop.Secret.Item.Attributes"].map { try self.attributes($0) } ?? [:]
            guard label.utf8.count <= 4096, !label.utf8.contains(0) else { throw invalid("the label (at most 4096 bytes)") }
            let item = NewItem(
                collection: name, label: label, attributes: attributes, secret: secret, contentType: contentType,
                creator: caller(message.sender).program ?? "", replace: replace, sender: message.sender)
            let vault = try openVault()
            guard vault.isUnlocked else {
                // Locked: the item is stored once the person unlocks, never dropped (keepassxc #7989).
                try requirePinentry(for: "CreateItem")
                let prompt = try makePrompt(owner: message.sender, emptyResult: .objectPath(SecretObjectPath.none)) { vault in
                    .objectPath(try self.store(item, in: vault))
                }
                return ([.objectPath(SecretObjectPath.none), .objectPath(prompt)], nil)
            }
            noteUse(of: vault)
            return ([.objectPath(try store(item, in: vault)), .objectPath(SecretObjectPath.none)], nil)
        case "Delete":
            try expect(message, "")
            let sender = message.sender
            let action = { (vault: Vault) throws -> DBusValue in
                let references = try self.search([:], in: name)
                try self.approve(references.compactMap { try? vault.record(withID: $0.recordID) }, .delete, for: sender, in: vault)
                for reference in references {
                    try vault.deleteRecord(withID: reference.recordID)
                    self.itemSignal("ItemDeleted", collection: name, reference.recordID)
                }
                self.createdCollections[name] = nil
                self.aliases = self.aliases.filter { $0.value != name || $0.key == "default" }
                self.signal(SecretObjectPath.root, "org.freedesktop.Secret.Service", "CollectionDeleted", [.objectPath(SecretObjectPath.collection(name).path)])
                return .objectPath(SecretObjectPath.none)
            }
            let vault = try openVault()
            guard vault.isUnlocked else {
                return ([.objectPath(try makePrompt(owner: message.sender, emptyResult: .objectPath(SecretObjectPath.none), action: action))], nil)
            }
            noteUse(of: vault)
            _ = try action(vault)
            return ([.objectPath(SecretObjectPath.none)], nil)
        default:
            throw SecretServiceFault(SecretError.unknownMethod, "a collection has no method \(message.member.prefix(64))")
        }
    }

    /// Every collection: `login`, those holding an item, those made by `CreateCollection`.
    func collectionNames() throws -> Set<String> {
        var names: Set<String> = [SecretServiceMember.defaultCollection]
        names.formUnion(createdCollections.keys)
        if let found = try? search([:], in: nil) { names.formUnion(found.map(\.collection)) }
        return names
    }

    /// The items holding every attribute pair, in one collection or all; read while locked too.
    func search(_ attributes: [String: String], in collection: String?) throws -> [SecretItemReference] {
        let vault = try openVault()
        let store = CredentialIdentityStore(vault: vault)
        // A device whose store is off lists nothing while locked (SPEC.md §7.6).
        guard store.state.isEnabled || vault.isUnlocked else { return [] }
        let found = attributes.isEmpty ? try everySecretItem(in: vault) : try store.secretItems(matching: attributes)
        return collection.map { name in found.filter { $0.collection == name } } ?? found
    }

    struct NewItem {
        let collection: String, label: String, attributes: [String: String], secret: [UInt8], contentType: String, creator: String
        let replace: Bool
        /// Who asks: replacing another program's item needs approval, as changing it does.
        let sender: String
    }

    /// Stores a new item, or with `replace` updates the collection's item with exactly these
    /// attributes; its path.
    func store(_ item: NewItem, in vault: Vault) throws -> String {
        if item.replace {
            for reference in try search(item.attributes, in: item.collection) {
                guard let record = try? vault.record(withID: reference.recordID), record.secretService?.attributes == item.attributes else { continue }
                try approve([record], .change, for: item.sender, in: vault)
                try vault.updateRecord(withID: record.id) { record in
                    var member = record.secretService ?? SecretServiceMember(collection: item.collection)
                    record.password = member.password(for: item.secret)
                    member.contentType = item.contentType
                    record.secretService = member
                    record.name = item.label
                }
                itemSignal("ItemChanged", collection: item.collection, record.id)
                return SecretObjectPath.item(collection: item.collection, record.id).path
            }
        }
        var member = SecretServiceMember(collection: item.collection, attributes: item.attributes, contentType: item.contentType, creator: item.creator)
        let password = member.password(for: item.secret)
        let stored = try vault.add([RecordDraft(
            serviceIdentifiers: [], user: "", password: password, name: item.label, kind: .secret, secretService: member)])[0]
        itemSignal("ItemCreated", collection: item.collection, stored.id)
        return SecretObjectPath.item(collection: item.collection, stored.id).path
    }

    func itemSignal(_ member: String, collection: String, _ id: RecordID) {
        signal(SecretObjectPath.collection(collection).path, "org.freedesktop.Secret.Collection", member,
               [.objectPath(SecretObjectPath.item(collection: collection, id).path)])
    }

    // MARK: Items

    func itemCall(_ message: DBusMessage, collection: String, id: RecordID) throws -> Outcome {
        let arguments = message.arguments
        switch message.member {
        case "GetSecret":
            try expect(message, "o")
            let session = try owned(session: arguments[0], by: message.sender)
            let vault = try unlockedVault()
            let record = try secretRecord(id, collection: collection, in: vault)
            try approve([record], .read, for: message.sender, in: vault)
            return ([try secretValue(record, session: session)], nil)
        case "SetSecret":
            try expect(message, "(oayays)")
            guard case .structure(let fields) = arguments[0] else { throw invalid("SetSecret") }
            let session = try owned(session: fields[0], by: message.sender)
            let (secret, contentType) = try session.decode(fields)
            guard secret.count <= SecretServiceMember.maximumSecretBytes else { throw invalid("SetSecret (a secret is at most 256 KiB)") }
            let vault = try unlockedVault()
            try approve([try secretRecord(id, collection: collection, in: vault)], .change, for: message.sender, in: vault)
            try vault.updateRecord(withID: id) { record in
                var member = record.secretService ?? SecretServiceMember(collection: collection)
                record.password = member.password(for: secret)
                member.contentType = contentType
                record.secretService = member
            }
            itemSignal("ItemChanged", collection: collection, id)
            return ([], nil)
        case "Delete":
            try expect(message, "")
            let vault = try openVault()
            guard try CredentialIdentityStore(vault: vault).item(for: id)?.kind == .secret || vault.isUnlocked else {
                throw SecretServiceFault(SecretError.noSuchObject, "no such item")
            }
            let sender = message.sender
            let action = { (vault: Vault) throws -> DBusValue in
                try self.approve([try self.secretRecord(id, collection: collection, in: vault)], .delete, for: sender, in: vault)
                try vault.deleteRecord(withID: id)
                self.itemSignal("ItemDeleted", collection: collection, id)
                return .objectPath(SecretObjectPath.none)
            }
            guard vault.isUnlocked else {
                return ([.objectPath(try makePrompt(owner: message.sender, emptyResult: .objectPath(SecretObjectPath.none), action: action))], nil)
            }
            noteUse(of: vault)
            _ = try action(vault)
            return ([.objectPath(SecretObjectPath.none)], nil)
        default:
            throw SecretServiceFault(SecretError.unknownMethod, "an item has no method \(message.member.prefix(64))")
        }
    }

    /// The record of a Secret Service item in `collection`; `NoSuchObject` for anything else.
    func secretRecord(_ id: RecordID, collection: String, in vault: Vault) throws -> Record {
        guard let record = try? vault.record(withID: id), record.kind == .secret,
              (record.secretService?.collection ?? SecretServiceMember.defaultCollection) == collection
        else { throw SecretServiceFault(SecretError.noSuchObject, "no such item") }
        return record
    }

    func secretValue(_ record: Record, session: SecretSession) throws -> DBusValue {
        let member = record.secretService ?? SecretServiceMember()
        guard let bytes = member.secretBytes(password: record.password) else { throw SecretServiceFault(SecretError.failed, "the item's secret is damaged") }
        return try session.encode(bytes, contentType: member.contentType)
    }
}
