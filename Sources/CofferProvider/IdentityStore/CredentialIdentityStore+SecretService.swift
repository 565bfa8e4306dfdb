import CofferStore
import CofferFormat
/// One Secret Service item as the identity store knows it while locked: which record, in which
/// collection (SPEC.md §6.5). The label is its item entry's name.
public struct SecretItemReference: Hashable, Sendable {
    public let recordID: RecordID
    public let collection: String

    public init(recordID: RecordID, collection: String) {
        self.recordID = recordID
        self.collection = collection
    }
}

extension CredentialIdentityStore {
    /// The Secret Service items that hold every pair of `attributes` (SPEC.md §6.5): one bucket
    /// read per pair, whatever the vault's size; no pairs: every `secret` item (the listing).
    /// Works while locked where the store is enabled, as suggestions do; only digests are compared.
    public func secretItems(matching attributes: [String: String]) throws(CredentialIdentityStoreError) -> [SecretItemReference] {
        try readable()
        guard !attributes.isEmpty else {
            let listing = try identityListing()
            return listing.withUnsafeText { text in
                listing.rows.filter { $0.kind == .secret }.map { row in
                    SecretItemReference(recordID: row.recordID, collection: String(decoding: text[row.identifier], as: UTF8.self))
                }
            }
        }
        let digests = attributes.map { AttributeEntry.digest(name: $0.key, value: $0.value) }
        return try mapped {
            try vault.readingIndex { index, manifest -> [SecretItemReference] in
                guard manifest.layout.hasItemEntries else { return [] }
                var matches: [RecordID: (collection: String, count: Int)] = [:]
                for digest in digests {
                    let filing = AttributeEntry.filingName(digest: digest)
                    for case .attribute(let entry) in try index.entries(
                        inSlot: index.itemSlot(filingName: filing), of: manifest, filter: .attributes([digest]), filedUnder: filing) {
                        matches[entry.recordID, default: (entry.collection, 0)].count += 1
                    }
                }
                return matches.filter { $0.value.count == digests.count }
                    .map { SecretItemReference(recordID: $0.key, collection: $0.value.collection) }
                    .sorted { $0.recordID < $1.recordID }
            }
        }
    }
}
