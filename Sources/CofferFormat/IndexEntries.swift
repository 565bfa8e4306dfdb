import CofferModel
import CofferSupport
import CofferCrypto
import FoundationEssentials
/// Which of Apple's credential identities an entry is: a password (`ASPasswordCredentialIdentity`),
/// a one-time code (`ASOneTimeCodeCredentialIdentity`, iOS 18) or a passkey
/// (`ASPasskeyCredentialIdentity`, iOS 17).
public enum IdentityKind: String, Sendable {
    case password
    case oneTimeCode
    case passkey
}

/// What layout 4 adds to every entry a listing shows — each identity and each item entry
/// (SPEC.md §7.3): its record's `modified` and tags, so the list of everything can be sorted by
/// date and filtered by tag while locked, as it is searched by name, with no join between the
/// buckets an item's entries are filed in. Empty (0, none) in an index of layout 3 or older.
public struct ItemDetails: Equatable, Sendable {
    /// The record's `modified`, whole Unix seconds.
    public var modified: Int64
    /// The record's tags in its order: the first 255 of at most 255 bytes (`filed`).
    public var tags: [String]

    public init(modified: Int64 = 0, tags: [String] = []) {
        self.modified = modified
        self.tags = Self.filed(tags)
    }

    public init(of record: Record) {
        self.init(modified: Int64(record.modified.timeIntervalSince1970.rounded(.down)), tags: record.tags)
    }

    public static let none = ItemDetails()

    /// At most this many tags are filed (the count is a u8), each at most this many bytes; a
    /// record may hold more, and longer ones, which its item view shows.
    public static let maximumTags = 255
    public static let maximumTagLength = 255

    /// The tags an entry files of `tags`: in order, the first 255 that are at most 255 bytes.
    static func filed(_ tags: [String]) -> [String] {
        guard tags.count > maximumTags || tags.contains(where: { $0.utf8.count > maximumTagLength }) else { return tags }
        return Array(tags.lazy.filter { $0.utf8.count <= maximumTagLength }.prefix(maximumTags))
    }
}

/// One suggestion in an identity bucket (SPEC.md §7.3).
public struct IdentityEntry: Equatable, Sendable {
    public var recordID: RecordID
    public var serviceIdentifier: CredentialServiceIdentifier
    public var user: String
    public var rank: Int64
    /// The record's match mode, copied here so a host can apply the provision rule (SPEC.md
    /// §8.1) without opening the record.
    public var mode: MatchMode
    /// The parsed service, as computed when written: lookups compare it instead of parsing.
    public var key: ServiceKey
    public var kind: IdentityKind
    /// The item's name, for lists (may be empty).
    public var name: String
    /// A passkey identity's credential id and user handle (empty for other kinds): what a relying
    /// party's `allowCredentials` names, known while locked as Apple's identity store knows it.
    public var credentialID: [UInt8]
    public var userHandle: [UInt8]
    /// Its record's date and tags (layout 4): always its item entry's.
    public var details: ItemDetails

    public init(
        recordID: RecordID, serviceIdentifier: CredentialServiceIdentifier, user: String, rank: Int64 = 0,
        mode: MatchMode = .host, key: ServiceKey, kind: IdentityKind = .password, name: String = "",
        credentialID: [UInt8] = [], userHandle: [UInt8] = [], details: ItemDetails = .none
    ) {
        self.recordID = recordID
        self.serviceIdentifier = serviceIdentifier
        self.user = user
        self.rank = rank
        self.mode = mode
        self.key = key
        self.kind = kind
        self.name = name
        self.credentialID = credentialID
        self.userHandle = userHandle
        self.details = details
    }

    /// The registrable domain (or host) the entry is filed under.
    public var site: String { key.site }

    public var identity: PasswordCredentialIdentity {
        PasswordCredentialIdentity(serviceIdentifier: serviceIdentifier, user: user, recordIdentifier: recordID.hex, rank: Int(rank))
    }

    /// The type byte of SPEC.md §7.3: 0/1 a password identity of a `.domain`/`.URL`, 2/3 a
    /// one-time-code identity, 5 a passkey identity (its service is the relying party's id, a domain).
    var typeByte: UInt8 {
        switch kind {
        case .password: serviceIdentifier.type == .URL ? 1 : 0
        case .oneTimeCode: serviceIdentifier.type == .URL ? 3 : 2
        case .passkey: Self.passkeyTypeByte
        }
    }

    static let passkeyTypeByte: UInt8 = 5
}

/// One item, filed by its name so a person can name it (SPEC.md §7.3): every record has exactly
/// one, whatever its kind. `listed` items have no identity of their own (a note, a card, a login
/// without a site) and appear in a whole listing through this entry.
public struct ItemEntry: Equatable, Sendable {
    public var recordID: RecordID
    public var kind: ItemKind
    public var listed: Bool
    public var name: String
    public var user: String
    /// The item's summary (SPEC.md §7.3): its least service identifier, or for an ssh-key item
    /// its public key (`ssh-ed25519 AAAA…`, what the SSH agent lists while locked); may be empty.
    public var service: String
    /// Its record's date and tags (layout 4).
    public var details: ItemDetails

    public init(
        recordID: RecordID, kind: ItemKind, listed: Bool, name: String, user: String, service: String, details: ItemDetails = .none
    ) {
        self.recordID = recordID
        self.kind = kind
        self.listed = listed
        self.name = name
        self.user = user
        self.service = service
        self.details = details
    }

    static let typeByte: UInt8 = 4

    /// What the entry is filed under: the name folded for lookups (`Resolving names` in
    /// SPEC.md §7.3), or the record id for an unnamed item, so unnamed items spread evenly.
    public var filingName: String { Self.filingName(name: name, recordID: recordID) }

    public static func filingName(name: String, recordID: RecordID) -> String {
        name.isEmpty ? "id:" + recordID.hex : "name:" + foldedName(name)
    }

    /// Names are looked up case-insensitively: lower case (Unicode's default mapping).
    public static func foldedName(_ name: String) -> String { name.lowercased() }
}

extension [BucketEntry] {
    /// One record's entries with each identity carrying the item entry's details (SPEC.md §7.3:
    /// every entry of a record carries the same); as they are when there is no item entry.
    package var sharingItemDetails: [BucketEntry] {
        guard let details = lazy.compactMap({ entry -> ItemDetails? in if case .item(let item) = entry { item.details } else { nil } }).first
        else { return self }
        return map { entry in
            var shared = entry
            shared.details = details
            return shared
        }
    }
}

/// One attribute pair of a Secret Service item (SPEC.md §7.3, §6.5), filed by the pair's
/// digest so `SearchItems` reads one bucket per attribute it is given, whatever the vault's
/// size — and the index holds the digest, never the attribute's name or value.
public struct AttributeEntry: Equatable, Sendable {
    public var recordID: RecordID
    /// `hex(BLAKE2b-128("coffer-attribute" ‖ u32 LE name length ‖ name ‖ value))`.
    public var digest: String
    /// The item's collection: the object path a search answers with, known while locked.
    public var collection: String

    public init(recordID: RecordID, digest: String, collection: String) {
        self.recordID = recordID
        self.digest = digest
        self.collection = collection
    }

    static let typeByte: UInt8 = 6

    /// What the entry is filed under (the bucket of `B(filing name)`).
    public var filingName: String { Self.filingName(digest: digest) }
    public static func filingName(digest: String) -> String { "attribute:" + digest }

    /// The digest of one attribute pair. Unkeyed: it lives only inside the sealed index, whose
    /// key a device keeps to answer searches while locked — anyone holding that key could key a
    /// hash as well. What it buys is that a name or value is never stored, only confirmed.
    public static func digest(name: String, value: String) -> String {
        var bytes = Array("coffer-attribute".utf8)
        bytes.append(littleEndian: UInt32(name.utf8.count))
        bytes += Array(name.utf8) + Array(value.utf8)
        return Hex.encode((try? BLAKE2b.hash(bytes, length: 16)) ?? [])
    }
}

/// An entry of an identity bucket.
public enum BucketEntry: Equatable, Sendable {
    case identity(IdentityEntry)
    case item(ItemEntry)
    case attribute(AttributeEntry)

    public var recordID: RecordID {
        switch self {
        case .identity(let entry): entry.recordID
        case .item(let entry): entry.recordID
        case .attribute(let entry): entry.recordID
        }
    }

    /// The record's date and tags the entry carries (layout 4); an attribute entry carries none.
    public var details: ItemDetails {
        get {
            switch self {
            case .identity(let entry): entry.details
            case .item(let entry): entry.details
            case .attribute: .none
            }
        }
        set {
            switch self {
            case .identity(var entry): entry.details = newValue; self = .identity(entry)
            case .item(var entry): entry.details = newValue; self = .item(entry)
            case .attribute: break
            }
        }
    }

    /// The entry as an index of layout 3 or older holds it: without details.
    public var withoutDetails: BucketEntry {
        var entry = self
        entry.details = .none
        return entry
    }

    var typeByte: UInt8 {
        switch self {
        case .identity(let entry): entry.typeByte
        case .item: ItemEntry.typeByte
        case .attribute: AttributeEntry.typeByte
        }
    }

    /// The two strings that order entries after record id and type (SPEC.md §7.3).
    var sortStrings: (String, String) {
        switch self {
        case .identity(let entry): (entry.serviceIdentifier.identifier, entry.user)
        case .item(let entry): (entry.name, entry.user)
        case .attribute(let entry): (entry.digest, entry.collection)
        }
    }

    /// Whether `other` stands for the same thing: one item entry per record, one identity per
    /// record, kind and service identifier.
    package func isSameEntry(as other: BucketEntry) -> Bool {
        switch (self, other) {
        case (.item(let a), .item(let b)): a.recordID == b.recordID
        case (.attribute(let a), .attribute(let b)): a.recordID == b.recordID && a.digest == b.digest
        case (.identity(let a), .identity(let b)):
            a.recordID == b.recordID && a.kind == b.kind && a.serviceIdentifier == b.serviceIdentifier
        default: false
        }
    }

    /// Whether this is a password identity of `service` for `user`.
    package func isPasswordIdentity(of service: CredentialServiceIdentifier, user: String) -> Bool {
        guard case .identity(let identity) = self else { return false }
        return identity.kind == .password && identity.serviceIdentifier == service && identity.user == user
    }

    /// `entries` in canonical order. Sorted as (record id, type, position) keys, comparing the
    /// strings only between entries of one record and type: an import's buckets of ~100 entries
    /// each spent a tenth of its time copying entries for the comparator.
    static func canonicallyOrdered(_ entries: [BucketEntry]) -> [BucketEntry] {
        let keys = entries.map { (words: $0.recordID.words, type: $0.typeByte) }
        let order = entries.indices.sorted { a, b in
            if keys[a].words != keys[b].words { return keys[a].words < keys[b].words }
            if keys[a].type != keys[b].type { return keys[a].type < keys[b].type }
            return canonicalOrder(entries[a], entries[b])
        }
        return order.map { entries[$0] }
    }

    static func canonicalOrder(_ a: BucketEntry, _ b: BucketEntry) -> Bool {
        if a.recordID != b.recordID { return a.recordID < b.recordID }
        if a.typeByte != b.typeByte { return a.typeByte < b.typeByte }
        let (a1, a2) = a.sortStrings, (b1, b2) = b.sortStrings
        if !a1.hasSameUTF8(as: b1) { return JSONValue.precedesInUTF8(a1, b1) }
        return JSONValue.precedesInUTF8(a2, b2)
    }
}

/// What the index knows about one record, to detect rollback and deletion (SPEC.md §7.4).
public struct LedgerEntry: Hashable, Sendable {
    public var recordID: RecordID
    public var revision: UInt64
    /// BLAKE2b-256 of the whole record file.
    public var ciphertextHash: [UInt8]
    /// The identity slots holding this record's identities and item entry.
    public var identitySlots: [UInt8]

    public init(recordID: RecordID, revision: UInt64, ciphertextHash: [UInt8], identitySlots: [UInt8]) {
        self.recordID = recordID
        self.revision = revision
        self.ciphertextHash = ciphertextHash
        self.identitySlots = identitySlots
    }
}
