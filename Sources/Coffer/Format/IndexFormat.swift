import FoundationEssentials

/// Identifies one immutable index shard file (`index/shards/<hex>`).
public struct ShardID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}

/// The root of the identity index (SPEC.md §6.2): a generation number and, for each of the
/// 512 slots, the shard file holding it. Slots 0..<256 are identity buckets, 256..<512 the
/// record ledger.
public struct IndexManifest: Equatable, Sendable {
    public static let identitySlots = 256
    public static let ledgerSlots = 256
    public static let slotCount = identitySlots + ledgerSlots
    static let plaintextLength = 8 + 2 + slotCount * identifierByteCount

    public var generation: UInt64
    public var shards: [ShardID?]

    public init(generation: UInt64 = 0, shards: [ShardID?] = Array(repeating: nil, count: IndexManifest.slotCount)) {
        self.generation = generation
        self.shards = shards
    }

    public static func ledgerSlot(of id: RecordID) -> Int { identitySlots + Int(id.firstByte) }

    public func encodedPlaintext() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.plaintextLength)
        bytes.append(littleEndian: generation)
        bytes.append(littleEndian: UInt16(Self.slotCount))
        for shard in shards { bytes += shard?.bytes ?? [UInt8](repeating: 0, count: identifierByteCount) }
        return bytes
    }

    public static func decode(plaintext: [UInt8]) throws(FormatError) -> IndexManifest {
        guard plaintext.count == plaintextLength else { throw .badLength }
        var reader = ByteReader(plaintext)
        let generation = try reader.integer(UInt64.self)
        guard try reader.integer(UInt16.self) == UInt16(slotCount) else { throw .nonCanonical("slot count") }
        var shards: [ShardID?] = []
        shards.reserveCapacity(slotCount)
        for _ in 0..<slotCount {
            // An id is two big-endian words: read as such, not byte by byte (every fill decodes
            // 512 of them, twice). All zero is an empty slot.
            let high = try reader.integer(UInt64.self).byteSwapped, low = try reader.integer(UInt64.self).byteSwapped
            shards.append(high == 0 && low == 0 ? nil : ShardID(words: IdentifierWords(high: high, low: low)))
        }
        return IndexManifest(generation: generation, shards: shards)
    }
}

/// One suggestion in an identity bucket (SPEC.md §6.3).
public struct IdentityEntry: Hashable, Sendable {
    public var recordID: RecordID
    public var serviceIdentifier: CredentialServiceIdentifier
    public var user: String
    public var rank: Int64
    /// The registrable domain (or host) the entry is filed under, as computed when written:
    /// lookups compare it before parsing anything (SPEC.md §6.3).
    public var site: String

    public init(recordID: RecordID, serviceIdentifier: CredentialServiceIdentifier, user: String, rank: Int64 = 0, site: String) {
        self.recordID = recordID
        self.serviceIdentifier = serviceIdentifier
        self.user = user
        self.rank = rank
        self.site = site
    }

    public var identity: PasswordCredentialIdentity {
        PasswordCredentialIdentity(serviceIdentifier: serviceIdentifier, user: user, recordIdentifier: recordID.hex, rank: Int(rank))
    }

    static func canonicalOrder(_ a: IdentityEntry, _ b: IdentityEntry) -> Bool {
        if a.recordID != b.recordID { return a.recordID < b.recordID }
        if a.serviceIdentifier.identifier != b.serviceIdentifier.identifier {
            return a.serviceIdentifier.identifier < b.serviceIdentifier.identifier
        }
        return a.user < b.user
    }
}

/// What the index knows about one record, to detect rollback and deletion (SPEC.md §6.4).
public struct LedgerEntry: Hashable, Sendable {
    public var recordID: RecordID
    public var revision: UInt64
    /// BLAKE2b-256 of the whole record file.
    public var ciphertextHash: [UInt8]
    /// The identity slots holding this record's identities.
    public var identitySlots: [UInt8]

    public init(recordID: RecordID, revision: UInt64, ciphertextHash: [UInt8], identitySlots: [UInt8]) {
        self.recordID = recordID
        self.revision = revision
        self.ciphertextHash = ciphertextHash
        self.identitySlots = identitySlots
    }
}

/// Binary payloads of index shards: entries sorted canonically, strings u16-length-prefixed.
public enum IndexShardCoding {
    static let hashLength = 32

    public static func encode(identities: [IdentityEntry]) -> [UInt8] {
        var bytes: [UInt8] = [0]  // payload kind 0: identities
        bytes.append(littleEndian: UInt32(identities.count))
        for entry in identities.sorted(by: IdentityEntry.canonicalOrder) {
            bytes += entry.recordID.bytes
            bytes.append(littleEndian: entry.rank)
            bytes.append(entry.serviceIdentifier.type == .URL ? 1 : 0)
            bytes.append(lengthPrefixed: entry.site)
            bytes.append(lengthPrefixed: entry.serviceIdentifier.identifier)
            bytes.append(lengthPrefixed: entry.user)
        }
        return bytes
    }

    /// One entry of an identity bucket as positions in the payload: what a scan yields before
    /// anything is copied into a `String`.
    struct ScannedIdentity {
        let recordID: RecordID
        let rank: Int64
        let type: CredentialServiceIdentifier.IdentifierType
        let site: Range<Int>
        let identifier: Range<Int>
        let user: Range<Int>
    }

    /// Walks an identity bucket (SPEC.md §6.3), checking every length and that every string is
    /// UTF-8, and calls `body` with each entry's positions. The one parser of the bucket layout:
    /// `decodeIdentities` and `IdentityListing` are built on it.
    /// - Parameter range: where the bucket is in `bytes` (all of it by default); positions
    ///   handed to `body` are positions in `bytes`.
    static func scanIdentities(
        _ bytes: [UInt8], in range: Range<Int>? = nil, _ body: (ScannedIdentity) throws(FormatError) -> Void
    ) throws(FormatError) {
        var reader = ByteReader(bytes, range: range)
        guard try reader.integer(UInt8.self) == 0 else { throw .nonCanonical("not an identity bucket") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= (range?.count ?? bytes.count) / 31 else { throw .badLength }
        func text(_ reader: inout ByteReader) throws(FormatError) -> Range<Int> {
            let range = try reader.lengthPrefixedBytes().indices
            guard isUTF8(bytes, range) else { throw .nonCanonical("invalid UTF-8") }
            return range
        }
        for _ in 0..<count {
            let id = RecordID(validatedBytes: try reader.take(identifierByteCount))
            let rank = try reader.integer(Int64.self)
            let typeByte = try reader.integer(UInt8.self)
            guard typeByte <= 1 else { throw .nonCanonical("service type") }
            try body(ScannedIdentity(
                recordID: id, rank: rank, type: typeByte == 1 ? .URL : .domain,
                site: try text(&reader), identifier: try text(&reader), user: try text(&reader)))
        }
        guard reader.isAtEnd else { throw .badLength }
    }

    /// Whether `bytes[range]` is UTF-8; ASCII (nearly every name) is checked without decoding.
    private static func isUTF8(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            let slice = UnsafeBufferPointer(rebasing: buffer[range])
            return slice.allSatisfy { $0 < 0x80 } || String(strictUTF8: slice) != nil
        }
    }

    /// Decodes a bucket; with `sites`, materialises only entries filed under one of them (the
    /// others are skipped by comparing bytes), so a lookup costs little even in a full bucket.
    public static func decodeIdentities(_ bytes: [UInt8], sites: [String]? = nil) throws(FormatError) -> [IdentityEntry] {
        let wanted = sites.map { $0.map { Array($0.utf8) } }
        var entries: [IdentityEntry] = []
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }  // checked by the scan
        try scanIdentities(bytes) { scanned throws(FormatError) in
            if let wanted, !wanted.contains(where: { $0.elementsEqual(bytes[scanned.site]) }) { return }
            entries.append(IdentityEntry(
                recordID: scanned.recordID,
                serviceIdentifier: CredentialServiceIdentifier(identifier: string(scanned.identifier), type: scanned.type),
                user: string(scanned.user), rank: scanned.rank, site: string(scanned.site)))
        }
        return entries
    }

    public static func encode(ledger: [LedgerEntry]) -> [UInt8] {
        var bytes: [UInt8] = [1]  // payload kind 1: ledger
        bytes.append(littleEndian: UInt32(ledger.count))
        for entry in ledger.sorted(by: { $0.recordID < $1.recordID }) {
            bytes += entry.recordID.bytes
            bytes.append(littleEndian: entry.revision)
            bytes += entry.ciphertextHash
            bytes.append(UInt8(entry.identitySlots.count))
            bytes += entry.identitySlots
        }
        return bytes
    }

    /// The entry of one record, found by scanning without materialising the others.
    public static func ledgerEntry(for id: RecordID, in bytes: [UInt8]) throws(FormatError) -> LedgerEntry? {
        var reader = ByteReader(bytes)
        guard try reader.integer(UInt8.self) == 1 else { throw .nonCanonical("not a ledger shard") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= bytes.count / 57 else { throw .badLength }
        for _ in 0..<count {
            let idBytes = try reader.take(identifierByteCount)
            let revision = try reader.integer(UInt64.self)
            let hash = try reader.take(hashLength)
            let slots = try reader.take(Int(try reader.integer(UInt8.self)))
            if (try? RecordID(bytes: idBytes)) == id {
                return LedgerEntry(recordID: id, revision: revision, ciphertextHash: Array(hash), identitySlots: Array(slots))
            }
        }
        return nil
    }

    public static func decodeLedger(_ bytes: [UInt8]) throws(FormatError) -> [LedgerEntry] {
        var reader = ByteReader(bytes)
        guard try reader.integer(UInt8.self) == 1 else { throw .nonCanonical("not a ledger shard") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= bytes.count / 57 else { throw .badLength }
        var entries: [LedgerEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let id = try RecordID(bytes: try reader.take(identifierByteCount))
            let revision = try reader.integer(UInt64.self)
            let hash = Array(try reader.take(hashLength))
            let slotCount = Int(try reader.integer(UInt8.self))
            entries.append(LedgerEntry(recordID: id, revision: revision, ciphertextHash: hash, identitySlots: Array(try reader.take(slotCount))))
        }
        guard reader.isAtEnd else { throw .badLength }
        return entries
    }
}

/// The intent a writer records before touching records (SPEC.md §6.5): enough to finish or
/// ignore the transaction after a crash, without the vault key.
public struct IndexJournal: Equatable, Sendable {
    public struct Change: Equatable, Sendable {
        public var recordID: RecordID
        /// Hash of the record file before the transaction; `nil` if it did not exist.
        public var oldHash: String?
        /// Hash after; `nil` for a deletion.
        public var newHash: String?
        public var revision: UInt64
        /// The record's identities after the transaction.
        public var identities: [IdentityEntry]
    }

    /// The generation the manifest will have once the transaction commits.
    public var generation: UInt64
    public var changes: [Change]

    public func encoded() throws(FormatError) -> [UInt8] {
        JSONValue.object([
            "generation": .integer(generation),
            "changes": .array(changes.map { change in
                .object([
                    "recordID": .string(change.recordID.hex),
                    "oldHash": change.oldHash.map(JSONValue.string) ?? .null,
                    "newHash": change.newHash.map(JSONValue.string) ?? .null,
                    "revision": .integer(change.revision),
                    "identities": .array(change.identities.map(\.journalJSON)),
                ])
            }),
        ]).canonicalBytes
    }

    /// - Throws: `FormatError.invalidDocument("journal")` for anything but a well-formed journal.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> IndexJournal {
        guard let document = try? JSONValue.parse(bytes), let members = document.objectValue,
              let generation = members["generation"]?.uint64Value, let changes = members["changes"]?.arrayValue
        else { throw .invalidDocument("journal") }
        var decoded: [Change] = []
        decoded.reserveCapacity(changes.count)
        for change in changes {
            guard let members = change.objectValue,
                  let recordID = members["recordID"]?.stringValue.flatMap({ try? RecordID(hex: $0) }),
                  let oldHash = optionalString(members["oldHash"]), let newHash = optionalString(members["newHash"]),
                  let revision = members["revision"]?.uint64Value,
                  let identityValues = members["identities"]?.arrayValue
            else { throw .invalidDocument("journal") }
            let identities = identityValues.compactMap(IdentityEntry.init(journalJSON:))
            guard identities.count == identityValues.count else { throw .invalidDocument("journal") }
            decoded.append(Change(recordID: recordID, oldHash: oldHash, newHash: newHash, revision: revision, identities: identities))
        }
        return IndexJournal(generation: generation, changes: decoded)
    }

    /// A hash member: absent or `null` is `.some(nil)`, a string is itself, anything else `nil`.
    private static func optionalString(_ value: JSONValue?) -> String?? {
        switch value {
        case nil, .null?: .some(nil)
        case .string(let text)?: .some(text)
        default: nil
        }
    }
}

extension IdentityEntry {
    /// `{"rank", "recordID", "serviceIdentifier": {...}, "site", "user"}` in the journal.
    var journalJSON: JSONValue {
        .object([
            "recordID": .string(recordID.hex), "serviceIdentifier": serviceIdentifier.json,
            "user": .string(user), "rank": .integer(rank), "site": .string(site),
        ])
    }

    init?(journalJSON: JSONValue) {
        guard let members = journalJSON.objectValue,
              let recordID = members["recordID"]?.stringValue.flatMap({ try? RecordID(hex: $0) }),
              let service = members["serviceIdentifier"].flatMap(CredentialServiceIdentifier.init(json:)),
              let user = members["user"]?.stringValue, let rank = members["rank"]?.int64Value,
              let site = members["site"]?.stringValue
        else { return nil }
        self.init(recordID: recordID, serviceIdentifier: service, user: user, rank: rank, site: site)
    }
}
