import CofferModel
import CofferSupport
import CofferCrypto
/// Identity buckets (SPEC.md §7.3): the payload of the 256 identity slots.
///
/// Layout 3 (kind 3): `0x03 ‖ count u32 ‖ entries`, each `record id ‖ rank i64 ‖ type u8 ‖ …`:
/// types 0–3 are identities (password or one-time code, of a `.domain` or a `.URL`) followed by
/// `mode u8 ‖ port u16 ‖ site ‖ host ‖ scheme ‖ path ‖ identifier ‖ user ‖ name`; type 5 a passkey
/// identity, the same followed by `credential id ‖ user handle` (base64url); type 4 is an
/// item entry followed by `kind u8 ‖ flags u8 ‖ name ‖ user ‖ service`; type 6 a Secret Service
/// attribute entry followed by `digest ‖ collection`. Layout 4 (kind 4) is layout 3 with each
/// identity and item entry followed by `modified i64 ‖ tag count u8 ‖ tags`. Layout 2 (kind 2): password
/// identities only, without `name`. Layout 1 (kind 0, format 0.x): password identities only,
/// `record id ‖ rank ‖ type ‖ site ‖ identifier ‖ user`.
extension IndexShardCoding {
    /// A bucket of layout 3 or 4 (the layouts Coffer writes; 4 unless a writer must keep 3,
    /// having no key to read the records' details with).
    public static func encode(_ entries: [BucketEntry], layout: IndexLayout = .current) -> [UInt8] {
        var bytes: [UInt8] = [layout.hasDetails ? detailedIdentityKind : identityKind]
        bytes.append(littleEndian: UInt32(entries.count))
        for entry in BucketEntry.canonicallyOrdered(entries) {
            bytes += entry.recordID.bytes
            switch entry {
            case .identity(let identity):
                bytes.append(littleEndian: identity.rank)
                bytes.append(identity.typeByte)
                bytes.append(identity.mode.indexByte)
                bytes.append(littleEndian: identity.key.port)
                for text in [identity.key.site, identity.key.host, identity.key.scheme, identity.key.path, identity.serviceIdentifier.identifier,
                             identity.user, identity.name] {
                    bytes.append(lengthPrefixed: text)
                }
                if identity.kind == .passkey {
                    bytes.append(lengthPrefixed: Base64.encodeURL(identity.credentialID))
                    bytes.append(lengthPrefixed: Base64.encodeURL(identity.userHandle))
                }
                if layout.hasDetails { bytes.append(identity.details) }
            case .item(let item):
                bytes.append(littleEndian: Int64(0))
                bytes.append(ItemEntry.typeByte)
                bytes.append(item.kind.indexByte)
                bytes.append(item.listed ? 1 : 0)
                for text in [item.name, item.user, item.service] { bytes.append(lengthPrefixed: text) }
                if layout.hasDetails { bytes.append(item.details) }
            case .attribute(let attribute):
                bytes.append(littleEndian: Int64(0))
                bytes.append(AttributeEntry.typeByte)
                bytes.append(lengthPrefixed: attribute.digest)
                bytes.append(lengthPrefixed: attribute.collection)
            }
        }
        return bytes
    }

    /// A bucket of layout 1 or 2 (password identities only), as earlier builds wrote it: for
    /// the re-encoding checks of the fuzz corpus.
    package static func encodeLegacy(identities: [IdentityEntry], layout: IndexLayout) -> [UInt8] {
        var bytes: [UInt8] = [layout == .sites ? legacyIdentityKind : regionIdentityKind]
        bytes.append(littleEndian: UInt32(identities.count))
        for entry in BucketEntry.canonicallyOrdered(identities.map(BucketEntry.identity)) {
            guard case .identity(let identity) = entry else { continue }
            bytes += identity.recordID.bytes
            bytes.append(littleEndian: identity.rank)
            bytes.append(identity.serviceIdentifier.type == .URL ? 1 : 0)
            if layout == .sites {
                for text in [identity.key.site, identity.serviceIdentifier.identifier, identity.user] { bytes.append(lengthPrefixed: text) }
            } else {
                bytes.append(identity.mode.indexByte)
                bytes.append(littleEndian: identity.key.port)
                for text in [identity.key.site, identity.key.host, identity.key.scheme, identity.key.path, identity.serviceIdentifier.identifier,
                             identity.user] {
                    bytes.append(lengthPrefixed: text)
                }
            }
        }
        return bytes
    }

    /// One entry as positions in the payload: what a scan yields before anything is copied.
    package enum Scanned {
        case identity(ScannedIdentity)
        case item(ScannedItem)
        case attribute(ScannedAttribute)

        package var recordID: RecordID {
            switch self {
            case .identity(let identity): identity.recordID
            case .item(let item): item.recordID
            case .attribute(let attribute): attribute.recordID
            }
        }
    }

    package struct ScannedAttribute {
        package let recordID: RecordID
        package let digest: Range<Int>
        package let collection: Range<Int>
    }

    package struct ScannedIdentity {
        package let recordID: RecordID
        package let rank: Int64
        package let type: CredentialServiceIdentifier.IdentifierType
        package let kind: IdentityKind
        package let site: Range<Int>
        package let identifier: Range<Int>
        package let user: Range<Int>
        /// Empty in a kind-0 bucket.
        package let name: Range<Int>
        /// The parsed service (kind 2 only; `nil` in a kind-0 bucket, whose readers parse the
        /// identifier themselves).
        package let parsed: Parsed?
        /// A passkey identity's credential id and user handle, base64url (type 5 only).
        package var passkey: (credentialID: Range<Int>, userHandle: Range<Int>)? = nil
        /// Its record's date and tags (layout 4; none before).
        package var details = ScannedDetails()

        package struct Parsed {
            package let mode: MatchMode
            package let port: UInt16
            package let host: Range<Int>
            package let scheme: Range<Int>
            package let path: Range<Int>
        }
    }

    package struct ScannedItem {
        package let recordID: RecordID
        package let kind: ItemKind
        package let listed: Bool
        package let name: Range<Int>
        package let user: Range<Int>
        package let service: Range<Int>
        /// Its record's date and tags (layout 4; none before).
        package var details = ScannedDetails()
    }

    /// An entry's details (layout 4) as positions: no array per entry while a listing scans.
    package struct ScannedDetails {
        /// The record's `modified`, Unix seconds.
        package var modified: Int64 = 0
        /// Where the tag list is: `count u8 ‖ count × string`, as stored (empty: no tags).
        package var tags: Range<Int> = 0..<0

        /// Reads `modified ‖ count u8 ‖ tags` at the reader, checking each tag's length and UTF-8.
        init(_ reader: inout ByteReader, _ bytes: [UInt8]) throws(FormatError) {
            modified = try reader.integer(Int64.self)
            let start = reader.offset
            for _ in 0..<Int(try reader.integer(UInt8.self)) {
                let tag = try reader.lengthPrefixedBytes().indices
                guard tag.count <= ItemDetails.maximumTagLength else { throw .nonCanonical("tag length") }
                guard isUTF8(bytes, tag) else { throw .nonCanonical("invalid UTF-8") }
            }
            tags = start..<reader.offset
        }

        init() {}

        /// Each tag's position in `bytes`, in order.
        package func tagRanges(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
            IndexShardCoding.tagRanges(tags, in: bytes)
        }
    }

    /// The tags of a stored tag list `count u8 ‖ count × (u16 LE length ‖ UTF-8)` at `list` in
    /// `bytes` (already checked when it was scanned), as positions in `bytes`.
    package static func tagRanges(_ list: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        forEachTag(list, in: bytes) { ranges.append($0); return true }
        return ranges
    }

    /// Walks a stored tag list (as `tagRanges`), calling `body` with each tag's position until it
    /// answers false: no array per entry (a tag filter walks every row's list).
    package static func forEachTag(_ list: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        guard !list.isEmpty else { return }
        var offset = list.lowerBound + 1
        for _ in 0..<Int(bytes[list.lowerBound]) {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            guard body(offset + 2..<offset + 2 + length) else { return }
            offset += 2 + length
        }
    }

    /// Walks an identity bucket of either kind, checking every length, that every string is
    /// UTF-8 and that entries come in canonical order, and calls `body` with each entry's
    /// positions. The one parser of the bucket layouts: `decodeBucket` and `IdentityListing`
    /// are built on it.
    /// - Parameters:
    ///   - range: where the bucket is in `bytes` (all of it by default); positions handed to
    ///     `body` are positions in `bytes`.
    ///   - layout: the manifest's layout, whose payload kind alone is accepted; `nil` accepts
    ///     either (a listing snapshot, bound to its manifest by digest).
    package static func scanBucket(
        _ bytes: [UInt8], in range: Range<Int>? = nil, layout: IndexLayout? = nil, _ body: (Scanned) throws(FormatError) -> Void
    ) throws(FormatError) {
        var reader = ByteReader(bytes, range: range)
        let kind = try reader.integer(UInt8.self)
        let accepted: [UInt8] = switch layout {
        case .details?: [detailedIdentityKind]
        case .items?: [identityKind]
        case .regions?: [regionIdentityKind]
        case .sites?: [legacyIdentityKind]
        case nil: [detailedIdentityKind, identityKind, regionIdentityKind, legacyIdentityKind]
        }
        let named = kind == identityKind || kind == detailedIdentityKind  // layouts 3 and 4
        guard accepted.contains(kind) else { throw .nonCanonical("not an identity bucket of this index layout") }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= (range?.count ?? bytes.count) / 31 else { throw .badLength }  // the smallest entry is 31 bytes
        func text(_ reader: inout ByteReader) throws(FormatError) -> Range<Int> {
            let range = try reader.lengthPrefixedBytes().indices
            guard isUTF8(bytes, range) else { throw .nonCanonical("invalid UTF-8") }
            return range
        }
        var previous: (id: RecordID, type: UInt8, first: Range<Int>, second: Range<Int>)?
        for _ in 0..<count {
            let id = RecordID(validatedBytes: try reader.take(identifierByteCount))
            let rank = try reader.integer(Int64.self)
            let typeByte = try reader.integer(UInt8.self)
            let scanned: Scanned
            let order: (Range<Int>, Range<Int>)
            if kind == legacyIdentityKind {
                guard typeByte <= 1 else { throw .nonCanonical("entry type") }
                let site = try text(&reader), identifier = try text(&reader), user = try text(&reader)
                scanned = .identity(ScannedIdentity(
                    recordID: id, rank: rank, type: typeByte == 1 ? .URL : .domain, kind: .password, site: site, identifier: identifier,
                    user: user, name: 0..<0, parsed: nil))
                order = (identifier, user)
            } else if typeByte <= (named ? 3 : 1) || (typeByte == IdentityEntry.passkeyTypeByte && named) {
                guard let mode = MatchMode(indexByte: try reader.integer(UInt8.self)) else { throw .nonCanonical("match mode") }
                let port = try reader.integer(UInt16.self)
                let site = try text(&reader), host = try text(&reader), scheme = try text(&reader), path = try text(&reader)
                let identifier = try text(&reader), user = try text(&reader)
                let name = named ? try text(&reader) : 0..<0
                let isPasskey = typeByte == IdentityEntry.passkeyTypeByte
                var identity = ScannedIdentity(
                    recordID: id, rank: rank, type: typeByte & 1 == 1 && !isPasskey ? .URL : .domain,
                    kind: isPasskey ? .passkey : typeByte >= 2 ? .oneTimeCode : .password,
                    site: site, identifier: identifier, user: user, name: name,
                    parsed: .init(mode: mode, port: port, host: host, scheme: scheme, path: path))
                if isPasskey { identity.passkey = (try text(&reader), try text(&reader)) }
                if kind == detailedIdentityKind { identity.details = try ScannedDetails(&reader, bytes) }
                scanned = .identity(identity)
                order = (identifier, user)
            } else if typeByte == ItemEntry.typeByte && named {
                guard rank == 0, let itemKind = ItemKind(indexByte: try reader.integer(UInt8.self)) else { throw .nonCanonical("item kind") }
                let flags = try reader.integer(UInt8.self)
                guard flags <= 1 else { throw .nonCanonical("item flags") }
                let name = try text(&reader), user = try text(&reader), service = try text(&reader)
                var item = ScannedItem(recordID: id, kind: itemKind, listed: flags == 1, name: name, user: user, service: service)
                if kind == detailedIdentityKind { item.details = try ScannedDetails(&reader, bytes) }
                scanned = .item(item)
                order = (name, user)
            } else if typeByte == AttributeEntry.typeByte && named {
                guard rank == 0 else { throw .nonCanonical("attribute rank") }
                let digest = try text(&reader), collection = try text(&reader)
                guard digest.count == 32, bytes[digest].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
                else { throw .nonCanonical("attribute digest") }
                scanned = .attribute(ScannedAttribute(recordID: id, digest: digest, collection: collection))
                order = (digest, collection)
            } else {
                throw .nonCanonical("entry type")
            }
            if let previous, !inCanonicalOrder(previous, (id, typeByte, order.0, order.1), bytes) {
                throw .nonCanonical("bucket entries out of order")
            }
            previous = (id, typeByte, order.0, order.1)
            try body(scanned)
        }
        guard reader.isAtEnd else { throw .badLength }
    }

    /// Whether entry `b` may follow entry `a`: record id, then type, then the two strings as
    /// bytes, ascending; an equal entry (a duplicate) may not.
    private static func inCanonicalOrder(
        _ a: (id: RecordID, type: UInt8, first: Range<Int>, second: Range<Int>),
        _ b: (id: RecordID, type: UInt8, first: Range<Int>, second: Range<Int>), _ bytes: [UInt8]
    ) -> Bool {
        if a.id != b.id { return a.id < b.id }
        if a.type != b.type { return a.type < b.type }
        if !bytes[a.first].elementsEqual(bytes[b.first]) { return bytes[a.first].lexicographicallyPrecedes(bytes[b.first]) }
        return bytes[a.second].lexicographicallyPrecedes(bytes[b.second])
    }

    /// Whether `bytes[range]` is UTF-8; ASCII (nearly every name) is checked eight bytes at a
    /// time without decoding.
    static func isUTF8(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
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

    /// What a lookup wants from a bucket: the identities of some sites (suggestions) or hosts
    /// (what may be filled without a choice), or the items of some folded names. Compared as
    /// bytes before anything is copied.
    public enum Filter: Sendable {
        case sites([String])
        case hosts([String])
        case names([String])
        /// Attribute entries of these digests (SPEC.md §6.5).
        case attributes([String])
    }

    /// Decodes a bucket; with a filter, materialises only the entries it names (the others are
    /// skipped by comparing bytes), so a lookup costs little even in a full bucket.
    /// - Parameter legacyKey: the parsed service of a kind-0 entry (which stores only its
    ///   identifier and site); the index layer supplies it, since parsing needs libidn2 and libpsl.
    package static func decodeBucket(
        _ bytes: [UInt8], layout: IndexLayout? = nil, filter: Filter? = nil,
        legacyKey: (CredentialServiceIdentifier, _ site: String) -> ServiceKey = { .unparsed(site: $1) }
    ) throws(FormatError) -> [BucketEntry] {
        var entries: [BucketEntry] = []
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }  // checked by the scan
        func details(_ scanned: ScannedDetails) -> ItemDetails {
            let tags = bytes.withUnsafeBufferPointer { scanned.tagRanges(in: $0) }
            return ItemDetails(modified: scanned.modified, tags: tags.map(string))
        }
        let wanted: [[UInt8]] = switch filter {
        case .sites(let values)?, .hosts(let values)?, .names(let values)?, .attributes(let values)?: values.map { Array($0.utf8) }
        case nil: []
        }
        try scanBucket(bytes, layout: layout) { scanned throws(FormatError) in
            switch scanned {
            case .identity(let identity):
                switch filter {
                case .names?, .attributes?: return
                case .sites?: guard wanted.contains(where: { $0.elementsEqual(bytes[identity.site]) }) else { return }
                case .hosts?:
                    // A legacy entry has no stored host: it is parsed and checked by the caller.
                    if let parsed = identity.parsed, !wanted.contains(where: { $0.elementsEqual(bytes[parsed.host]) }) { return }
                case nil: break
                }
                let service = CredentialServiceIdentifier(identifier: string(identity.identifier), type: identity.type)
                let key: ServiceKey, mode: MatchMode
                if let parsed = identity.parsed {
                    key = ServiceKey(
                        site: string(identity.site), host: string(parsed.host), scheme: string(parsed.scheme), port: parsed.port,
                        path: string(parsed.path))
                    mode = parsed.mode
                } else {
                    key = legacyKey(service, string(identity.site))
                    mode = .host
                }
                entries.append(.identity(IdentityEntry(
                    recordID: identity.recordID, serviceIdentifier: service, user: string(identity.user), rank: identity.rank,
                    mode: mode, key: key, kind: identity.kind, name: string(identity.name),
                    credentialID: identity.passkey.flatMap { Base64.decodeURL(string($0.credentialID)) } ?? [],
                    userHandle: identity.passkey.flatMap { Base64.decodeURL(string($0.userHandle)) } ?? [],
                    details: details(identity.details))))
            case .item(let item):
                switch filter {
                case .sites?, .hosts?, .attributes?: return
                case .names?:
                    let folded = Array(ItemEntry.foldedName(string(item.name)).utf8)
                    guard wanted.contains(where: { $0 == folded }) else { return }
                case nil: break
                }
                entries.append(.item(ItemEntry(
                    recordID: item.recordID, kind: item.kind, listed: item.listed, name: string(item.name), user: string(item.user),
                    service: string(item.service), details: details(item.details))))
            case .attribute(let attribute):
                switch filter {
                case .attributes?: guard wanted.contains(where: { $0.elementsEqual(bytes[attribute.digest]) }) else { return }
                case nil: break
                default: return
                }
                entries.append(.attribute(AttributeEntry(
                    recordID: attribute.recordID, digest: string(attribute.digest), collection: string(attribute.collection))))
            }
        }
        return entries
    }
}

extension [UInt8] {
    /// An entry's details as layout 4 stores them: `modified i64 ‖ tag count u8 ‖ tags`.
    mutating func append(_ details: ItemDetails) {
        append(littleEndian: details.modified)
        append(UInt8(details.tags.count))
        for tag in details.tags { append(lengthPrefixed: tag) }
    }
}
