import FoundationEssentials

/// Identifies one immutable index shard file (`index/shards/<hex>`).
public struct ShardID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}

/// How the identity buckets are laid out (SPEC.md §6.3); the manifest's version byte says which.
public enum IndexLayout: UInt8, Sendable {
    /// Format 0.x: an identity is filed under the keyed hash of its site alone, and bucket
    /// entries hold only the identifier (payload kind 0). Read, and rewritten as `.regions` by
    /// the next write.
    case sites = 1
    /// Each site owns a region of 16 buckets and an identity is filed within it by its host;
    /// entries carry the parsed service (payload kind 2), so a lookup compares bytes.
    case regions = 2
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
    /// Written as the manifest file's version byte; a new index is always `.regions`.
    public var layout: IndexLayout

    public init(
        generation: UInt64 = 0, shards: [ShardID?] = Array(repeating: nil, count: IndexManifest.slotCount),
        layout: IndexLayout = .regions
    ) {
        self.generation = generation
        self.shards = shards
        self.layout = layout
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

    public static func decode(plaintext: [UInt8], layout: IndexLayout) throws(FormatError) -> IndexManifest {
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
        return IndexManifest(generation: generation, shards: shards, layout: layout)
    }
}

/// One suggestion in an identity bucket (SPEC.md §6.3).
public struct IdentityEntry: Equatable, Sendable {
    public var recordID: RecordID
    public var serviceIdentifier: CredentialServiceIdentifier
    public var user: String
    public var rank: Int64
    /// The record's match mode, copied here so a host can apply the provision rule (SPEC.md
    /// §7.1) without opening the record.
    public var mode: MatchMode
    /// The parsed service, as computed when written: lookups compare it instead of parsing.
    public var key: ServiceKey

    public init(
        recordID: RecordID, serviceIdentifier: CredentialServiceIdentifier, user: String, rank: Int64 = 0,
        mode: MatchMode = .host, key: ServiceKey
    ) {
        self.recordID = recordID
        self.serviceIdentifier = serviceIdentifier
        self.user = user
        self.rank = rank
        self.mode = mode
        self.key = key
    }

    /// The registrable domain (or host) the entry is filed under.
    public var site: String { key.site }

    public var identity: PasswordCredentialIdentity {
        PasswordCredentialIdentity(serviceIdentifier: serviceIdentifier, user: user, recordIdentifier: recordID.hex, rank: Int(rank))
    }

    static func canonicalOrder(_ a: IdentityEntry, _ b: IdentityEntry) -> Bool {
        if a.recordID != b.recordID { return a.recordID < b.recordID }
        if a.serviceIdentifier.identifier != b.serviceIdentifier.identifier {
            return JSONValue.precedesInUTF8(a.serviceIdentifier.identifier, b.serviceIdentifier.identifier)
        }
        return JSONValue.precedesInUTF8(a.user, b.user)
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
    /// Payload kinds (the first byte): identities as format 0.x wrote them, the ledger,
    /// identities with their parsed service (SPEC.md §6.3, §6.4).
    static let legacyIdentityKind: UInt8 = 0
    static let ledgerKind: UInt8 = 1
    static let identityKind: UInt8 = 2

    /// A bucket of layout `.regions` (payload kind 2).
    public static func encode(identities: [IdentityEntry]) -> [UInt8] {
        var bytes: [UInt8] = [identityKind]
        bytes.append(littleEndian: UInt32(identities.count))
        for entry in identities.sorted(by: IdentityEntry.canonicalOrder) {
            bytes += entry.recordID.bytes
            bytes.append(littleEndian: entry.rank)
            bytes.append(entry.serviceIdentifier.type == .URL ? 1 : 0)
            bytes.append(entry.mode.indexByte)
            bytes.append(littleEndian: entry.key.port)
            for text in [entry.key.site, entry.key.host, entry.key.scheme, entry.key.path, entry.serviceIdentifier.identifier, entry.user] {
                bytes.append(lengthPrefixed: text)
            }
        }
        return bytes
    }

    /// A bucket of layout `.sites` (payload kind 0), as format 0.x wrote it: for the vectors
    /// of that layout and the migration tests only.
    static func encodeLegacy(identities: [IdentityEntry]) -> [UInt8] {
        var bytes: [UInt8] = [legacyIdentityKind]
        bytes.append(littleEndian: UInt32(identities.count))
        for entry in identities.sorted(by: IdentityEntry.canonicalOrder) {
            bytes += entry.recordID.bytes
            bytes.append(littleEndian: entry.rank)
            bytes.append(entry.serviceIdentifier.type == .URL ? 1 : 0)
            bytes.append(lengthPrefixed: entry.key.site)
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
        /// The parsed service (kind 2 only; `nil` in a kind-0 bucket, whose readers parse the
        /// identifier themselves).
        let parsed: Parsed?

        struct Parsed {
            let mode: MatchMode
            let port: UInt16
            let host: Range<Int>
            let scheme: Range<Int>
            let path: Range<Int>
        }
    }

    /// Walks an identity bucket of either kind (SPEC.md §6.3), checking every length, that every
    /// string is UTF-8 and that entries come in canonical order, and calls `body` with each
    /// entry's positions. The one parser of the bucket layouts: `decodeIdentities` and
    /// `IdentityListing` are built on it.
    /// - Parameters:
    ///   - range: where the bucket is in `bytes` (all of it by default); positions handed to
    ///     `body` are positions in `bytes`.
    ///   - layout: the manifest's layout, whose payload kind alone is accepted; `nil` accepts
    ///     either (a listing snapshot, bound to its manifest by digest).
    static func scanIdentities(
        _ bytes: [UInt8], in range: Range<Int>? = nil, layout: IndexLayout? = nil,
        _ body: (ScannedIdentity) throws(FormatError) -> Void
    ) throws(FormatError) {
        var reader = ByteReader(bytes, range: range)
        let kind = try reader.integer(UInt8.self)
        let accepted: [UInt8] = switch layout {
        case .regions?: [identityKind]
        case .sites?: [legacyIdentityKind]
        case nil: [identityKind, legacyIdentityKind]
        }
        guard accepted.contains(kind) else { throw .nonCanonical("not an identity bucket of this index layout") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= (range?.count ?? bytes.count) / (kind == identityKind ? 40 : 31) else { throw .badLength }
        func text(_ reader: inout ByteReader) throws(FormatError) -> Range<Int> {
            let range = try reader.lengthPrefixedBytes().indices
            guard isUTF8(bytes, range) else { throw .nonCanonical("invalid UTF-8") }
            return range
        }
        var previous: (id: RecordID, identifier: Range<Int>, user: Range<Int>)?
        for _ in 0..<count {
            let id = RecordID(validatedBytes: try reader.take(identifierByteCount))
            let rank = try reader.integer(Int64.self)
            let typeByte = try reader.integer(UInt8.self)
            guard typeByte <= 1 else { throw .nonCanonical("service type") }
            let scanned: ScannedIdentity
            if kind == identityKind {
                guard let mode = MatchMode(indexByte: try reader.integer(UInt8.self)) else { throw .nonCanonical("match mode") }
                let port = try reader.integer(UInt16.self)
                let site = try text(&reader), host = try text(&reader), scheme = try text(&reader), path = try text(&reader)
                scanned = ScannedIdentity(
                    recordID: id, rank: rank, type: typeByte == 1 ? .URL : .domain, site: site,
                    identifier: try text(&reader), user: try text(&reader),
                    parsed: .init(mode: mode, port: port, host: host, scheme: scheme, path: path))
            } else {
                scanned = ScannedIdentity(
                    recordID: id, rank: rank, type: typeByte == 1 ? .URL : .domain,
                    site: try text(&reader), identifier: try text(&reader), user: try text(&reader), parsed: nil)
            }
            if let previous, !inCanonicalOrder(previous, (id, scanned.identifier, scanned.user), bytes) {
                throw .nonCanonical("bucket entries out of order")
            }
            previous = (id, scanned.identifier, scanned.user)
            try body(scanned)
        }
        guard reader.isAtEnd else { throw .badLength }
    }

    /// Whether entry `b` may follow entry `a`: record id, then identifier bytes, then user bytes,
    /// ascending; an equal triple (a duplicate) may not.
    private static func inCanonicalOrder(
        _ a: (id: RecordID, identifier: Range<Int>, user: Range<Int>), _ b: (id: RecordID, identifier: Range<Int>, user: Range<Int>),
        _ bytes: [UInt8]
    ) -> Bool {
        if a.id != b.id { return a.id < b.id }
        if !bytes[a.identifier].elementsEqual(bytes[b.identifier]) {
            return bytes[a.identifier].lexicographicallyPrecedes(bytes[b.identifier])
        }
        return bytes[a.user].lexicographicallyPrecedes(bytes[b.user])
    }

    /// Whether `bytes[range]` is UTF-8; ASCII (nearly every name) is checked eight bytes at a
    /// time without decoding.
    private static func isUTF8(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var position = range.lowerBound
            var high: UInt64 = 0
            while position + 8 <= range.upperBound {
                high |= buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                position += 8
            }
            while position < range.upperBound {
                high |= UInt64(buffer[position])
                position += 1
            }
            guard high & 0x8080_8080_8080_8080 != 0 else { return true }
            return String(strictUTF8: UnsafeBufferPointer(rebasing: buffer.bindMemory(to: UInt8.self)[range])) != nil
        }
    }

    /// What a lookup wants from a bucket: the entries of some sites (suggestions), or of some
    /// hosts (what may be filled without a choice). Compared as bytes before anything is copied.
    public enum Filter: Sendable {
        case sites([String])
        case hosts([String])
    }

    /// Decodes a bucket; with a filter, materialises only the entries it names (the others are
    /// skipped by comparing bytes), so a lookup costs little even in a full bucket.
    /// - Parameter legacyKey: the parsed service of a kind-0 entry (which stores only its
    ///   identifier and site); the index layer supplies it, since parsing needs libidn2 and libpsl.
    static func decodeIdentities(
        _ bytes: [UInt8], layout: IndexLayout? = nil, filter: Filter? = nil,
        legacyKey: (CredentialServiceIdentifier, _ site: String) -> ServiceKey = { .unparsed(site: $1) }
    ) throws(FormatError) -> [IdentityEntry] {
        let wanted: (sites: [[UInt8]], hosts: [[UInt8]])? = switch filter {
        case .sites(let sites)?: (sites.map { Array($0.utf8) }, [])
        case .hosts(let hosts)?: ([], hosts.map { Array($0.utf8) })
        case nil: nil
        }
        var entries: [IdentityEntry] = []
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }  // checked by the scan
        try scanIdentities(bytes, layout: layout) { scanned throws(FormatError) in
            if let wanted {
                let siteWanted = wanted.sites.contains { $0.elementsEqual(bytes[scanned.site]) }
                // A legacy entry has no stored host: it is parsed and checked by the caller.
                let hostWanted = scanned.parsed.map { parsed in wanted.hosts.contains { $0.elementsEqual(bytes[parsed.host]) } }
                guard siteWanted || (hostWanted ?? !wanted.hosts.isEmpty) else { return }
            }
            let service = CredentialServiceIdentifier(identifier: string(scanned.identifier), type: scanned.type)
            let key: ServiceKey
            let mode: MatchMode
            if let parsed = scanned.parsed {
                key = ServiceKey(
                    site: string(scanned.site), host: string(parsed.host), scheme: string(parsed.scheme), port: parsed.port,
                    path: string(parsed.path))
                mode = parsed.mode
            } else {
                key = legacyKey(service, string(scanned.site))
                mode = .host
            }
            entries.append(IdentityEntry(
                recordID: scanned.recordID, serviceIdentifier: service, user: string(scanned.user), rank: scanned.rank,
                mode: mode, key: key))
        }
        return entries
    }

    public static func encode(ledger: [LedgerEntry]) -> [UInt8] {
        var bytes: [UInt8] = [ledgerKind]
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
        guard try reader.integer(UInt8.self) == ledgerKind else { throw .nonCanonical("not a ledger shard") }
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
        guard try reader.integer(UInt8.self) == ledgerKind else { throw .nonCanonical("not a ledger shard") }
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

    /// - Parameter key: the parsed service of an identity (the journal stores only its identifier
    ///   and site; parsing needs libidn2 and libpsl, which the format layer does not call).
    /// - Throws: `FormatError.invalidDocument("journal")` for anything but a well-formed journal.
    public static func decode(
        _ bytes: [UInt8], key: (CredentialServiceIdentifier, _ site: String) -> ServiceKey = { .unparsed(site: $1) }
    ) throws(FormatError) -> IndexJournal {
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
            let identities = identityValues.compactMap { IdentityEntry(journalJSON: $0, key: key) }
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
    /// `{"match", "rank", "recordID", "serviceIdentifier": {...}, "site", "user"}` in the journal.
    var journalJSON: JSONValue {
        .object([
            "recordID": .string(recordID.hex), "serviceIdentifier": serviceIdentifier.json,
            "user": .string(user), "rank": .integer(rank), "site": .string(site), "match": .string(mode.rawValue),
        ])
    }

    /// An absent `match` (a journal of format 0.x) is `host`.
    init?(journalJSON: JSONValue, key: (CredentialServiceIdentifier, String) -> ServiceKey) {
        guard let members = journalJSON.objectValue,
              let recordID = members["recordID"]?.stringValue.flatMap({ try? RecordID(hex: $0) }),
              let service = members["serviceIdentifier"].flatMap(CredentialServiceIdentifier.init(json:)),
              let user = members["user"]?.stringValue, let rank = members["rank"]?.int64Value,
              let site = members["site"]?.stringValue
        else { return nil }
        let mode: MatchMode
        switch members["match"] {
        case nil: mode = .host
        case .string(let name)?:
            guard let named = MatchMode(rawValue: name) else { return nil }
            mode = named
        default: return nil
        }
        self.init(recordID: recordID, serviceIdentifier: service, user: user, rank: rank, mode: mode, key: key(service, site))
    }
}
