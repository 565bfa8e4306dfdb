import CofferModel
import CofferSupport
import FoundationEssentials

/// Identifies one immutable index shard file (`index/shards/<hex>`).
public struct ShardID: RandomIdentifier {
    public let words: IdentifierWords
    public init(words: IdentifierWords) { self.words = words }
}

/// How the identity buckets are laid out (SPEC.md §7.3); the manifest's version byte says which.
public enum IndexLayout: UInt8, Sendable {
    /// Format 0.x: an identity is filed under the keyed hash of its site alone, and bucket
    /// entries hold only the identifier (payload kind 0). Read, and rewritten as `.regions` by
    /// the next write.
    case sites = 1
    /// Each site owns a region of 16 buckets and an identity is filed within it by its host;
    /// entries carry the parsed service (payload kind 2), so a lookup compares bytes. Written by
    /// the first builds of format 1: read, and rewritten as `.items` by the next write.
    case regions = 2
    /// `.regions`' filing, with one-time-code identities and an item entry per record filed by
    /// its name (payload kind 3). Read, and rewritten as `.details` by a writer that holds the
    /// vault key (it needs every record's tags and date).
    case items = 3
    /// `.items` with each item entry also holding its record's `modified` and tags (payload kind
    /// 4), so a list of everything can be sorted by date and filtered by tag while locked, as
    /// it is by name. What Coffer writes.
    case details = 4

    /// The layout every write produces.
    public static let current = IndexLayout.details

    /// Whether item entries hold the record's date and tags.
    public var hasDetails: Bool { self == .details }

    /// Whether every record has an item entry (layouts 3 and 4).
    public var hasItemEntries: Bool { self == .items || self == .details }

    /// Whether identities are filed by site region and host (layouts 2, 3 and 4).
    var filesByRegion: Bool { self != .sites }
}

/// The root of the identity index (SPEC.md §7.2): a generation number and, for each of the
/// 512 slots, the shard file holding it. Slots 0..<256 are identity buckets, 256..<512 the
/// record ledger.
public struct IndexManifest: Equatable, Sendable {
    public static let identitySlots = 256
    public static let ledgerSlots = 256
    public static let slotCount = identitySlots + ledgerSlots
    package static let plaintextLength = 8 + 2 + slotCount * identifierByteCount

    public var generation: UInt64
    public var shards: [ShardID?]
    /// Written as the manifest file's version byte; a new index is always `.current`.
    public var layout: IndexLayout

    public init(
        generation: UInt64 = 0, shards: [ShardID?] = Array(repeating: nil, count: IndexManifest.slotCount),
        layout: IndexLayout = .current
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
