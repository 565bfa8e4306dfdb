import CofferDBus
import CofferProvider
import CofferHostKit
import FoundationEssentials

extension SecretServiceProvider {
    /// `org.freedesktop.DBus.Properties`: Get, GetAll and Set of the service, collection and item
    /// properties (SPEC.md §17.1). While locked an item shows its label (as a listing does) and
    /// `Locked`, not its attributes, which the index holds only as digests.
    func properties(_ message: DBusMessage, _ object: SecretObjectPath) throws -> [DBusValue] {
        let arguments = message.arguments
        switch message.member {
        case "Get":
            try expect(message, "ss")
            guard case .string(let name) = arguments[1] else { throw invalid("Get") }
            guard let value = try propertyValues(of: object).first(where: { $0.0 == name })?.1 else {
                throw SecretServiceFault(SecretError.invalidArgs, "no property \(name.prefix(64))")
            }
            return [.variant(value)]
        case "GetAll":
            try expect(message, "s")
            return [.variants(try propertyValues(of: object))]
        case "Set":
            try expect(message, "ssv")
            guard case .string(let name) = arguments[1], case .variant(let value) = arguments[2] else { throw invalid("Set") }
            try setProperty(name, value, of: object, sender: message.sender)
            return []
        default:
            throw SecretServiceFault(SecretError.unknownMethod, "no method \(message.member.prefix(64))")
        }
    }

    private func propertyValues(of object: SecretObjectPath) throws -> [(String, DBusValue)] {
        switch object {
        case .service:
            return [("Collections", .paths(try collectionNames().sorted().map { SecretObjectPath.collection($0).path }))]
        case .collection(let name):
            guard try collectionNames().contains(name) else { throw SecretServiceFault(SecretError.noSuchObject, "no such collection") }
            let vault = try openVault()
            let items = try search([:], in: name).map { SecretObjectPath.item(collection: name, $0.recordID).path }
            let label = createdCollections[name] ?? (name == SecretServiceMember.defaultCollection ? "Login" : name)
            return [("Items", .paths(items)), ("Label", .string(label)), ("Locked", .bool(!vault.isUnlocked)),
                    ("Created", .uint64(0)), ("Modified", .uint64(0))]
        case .item(let collection, let id):
            let vault = try openVault()
            if vault.isUnlocked {
                let record = try secretRecord(id, collection: collection, in: vault)
                let member = record.secretService ?? SecretServiceMember()
                return [("Locked", .bool(false)), ("Attributes", .strings(member.attributes)), ("Label", .string(record.name)),
                        ("Created", .uint64(UInt64(max(0, record.created.timeIntervalSince1970)))),
                        ("Modified", .uint64(UInt64(max(0, record.modified.timeIntervalSince1970))))]
            }
            guard let entry = try? CredentialIdentityStore(vault: vault).item(for: id), entry.kind == .secret, entry.service == collection else {
                throw SecretServiceFault(SecretError.noSuchObject, "no such item")
            }
            return [("Locked", .bool(true)), ("Attributes", .strings([:])), ("Label", .string(entry.name)),
                    ("Created", .uint64(0)), ("Modified", .uint64(0))]
        case .session, .prompt:
            return []
        }
    }

    private func setProperty(_ name: String, _ value: DBusValue, of object: SecretObjectPath, sender: String) throws {
        switch (object, name) {
        case (.collection(let collection), "Label"):
            guard let label = value.stringValue else { throw invalid("Label (s)") }
            guard try collectionNames().contains(collection) else { throw SecretServiceFault(SecretError.noSuchObject, "no such collection") }
            createdCollections[collection] = label
        case (.item(let collection, let id), "Label"), (.item(let collection, let id), "Attributes"):
            let vault = try unlockedVault()
            try approve([try secretRecord(id, collection: collection, in: vault)], .change, for: sender, in: vault)
            if name == "Label" {
                guard case .string(let label) = value, label.utf8.count <= 4096 else { throw invalid("Label (s)") }
                try vault.updateRecord(withID: id) { $0.name = label }
            } else {
                let attributes = try self.attributes(value)
                try vault.updateRecord(withID: id) { record in
                    var member = record.secretService ?? SecretServiceMember(collection: collection)
                    member.attributes = attributes
                    record.secretService = member
                }
            }
            itemSignal("ItemChanged", collection: collection, id)
        default:
            throw SecretServiceFault(SecretError.invalidArgs, "property \(name.prefix(64)) cannot be set here")
        }
    }
}
