import CofferProvider
import FoundationEssentials

/// One item as another Secret Service provider (gnome-keyring, KWallet's bridge, KeePassXC) hands
/// it over the bus: what `coffer import --from secret-service` reads (SPEC.md §12, §17.5).
public struct SecretServiceExportedItem: Sendable {
    public var collection: String
    public var label: String
    public var attributes: [String: String]
    public var secret: [UInt8]
    public var contentType: String
    public var created: Date?
    public var modified: Date?

    public init(
        collection: String, label: String, attributes: [String: String], secret: [UInt8], contentType: String, created: Date?,
        modified: Date?
    ) {
        self.collection = collection
        self.label = label
        self.attributes = attributes
        self.secret = secret
        self.contentType = contentType
        self.created = created
        self.modified = modified
    }
}

/// Maps a running keyring's items to `secret` items: the label is the name, the secret the
/// password (base64 when it is not UTF-8), collection, attributes and content type the
/// `secretService` member. Nothing is dropped except what the bounds of SPEC.md §6.5 refuse.
public enum SecretServiceImport {
    public static func read(_ exported: [SecretServiceExportedItem]) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .secretService)
        var items: [ImportedItem] = []
        for (index, item) in exported.enumerated() {
            let origin = "item \(index + 1) (\(item.collection))"
            guard SecretServiceMember.areValidAttributes(item.attributes) else {
                throw .malformed(location: origin, reason: "more than \(SecretServiceMember.maximumAttributes) attributes, or one too long")
            }
            guard item.secret.count <= SecretServiceMember.maximumSecretBytes else {
                throw .malformed(location: origin, reason: "a secret larger than \(SecretServiceMember.maximumSecretBytes / 1024) KiB")
            }
            let collection = SecretServiceMember.isValidCollectionName(item.collection) ? item.collection : SecretServiceMember.defaultCollection
            if collection != item.collection { report.notice("\(origin): collection '\(item.collection.prefix(40))' stored as '\(collection)'") }
            var member = SecretServiceMember(
                collection: collection, attributes: item.attributes, contentType: item.contentType.isEmpty ? SecretServiceMember.defaultContentType : item.contentType)
            let password = member.password(for: item.secret)
            report.kept("label", as: "name", value: item.label)
            report.kept("secret", as: "password", value: password)
            report.kept("collection", as: "secretService.collection", value: collection)
            report.kept("attributes", as: "secretService.attributes", value: item.attributes.isEmpty ? "" : "x")
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(RecordDraft(
                serviceIdentifiers: [], user: "", password: password, name: item.label, kind: .secret, created: item.created,
                modified: item.modified, secretService: member), at: origin)))
        }
        return (items, report)
    }
}
