/// Every identity of the store in suggestion order, kept as the decrypted bucket payloads (one
/// buffer, as read) plus one small row per identity: what `coffer list` and `coffer search` print.
///
/// Why not `[RankedIdentity]`: a listing of 10,000 identities spent most of its time making,
/// copying, sorting and freeing three `String`s per identity that it then only wrote out again
/// (97 M instructions and 2,600 page faults; SPEC.md §6.3 keeps the strings UTF-8 already). A
/// row holds positions into the payload; `identity(_:)` makes the Apple-shaped value on demand.
public struct IdentityListing: Sendable {
    public struct Row: Sendable {
        public let recordID: RecordID
        public let rank: Int64
        /// Unix seconds of the last fill on this device; 0 if never.
        public let lastUsed: UInt64
        public let type: CredentialServiceIdentifier.IdentifierType
        let identifierBounds: (start: Int32, end: Int32)
        let userBounds: (start: Int32, end: Int32)

        /// Where the service identifier's UTF-8 bytes are in `withUnsafeText`'s buffer.
        public var identifier: Range<Int> { Int(identifierBounds.start)..<Int(identifierBounds.end) }
        /// Where the user name's UTF-8 bytes are in `withUnsafeText`'s buffer.
        public var user: Range<Int> { Int(userBounds.start)..<Int(userBounds.end) }
    }

    /// The bucket payloads, one after another; rows point into it.
    private let text: [UInt8]
    public private(set) var rows: [Row]

    /// Rows of framed identity buckets (`u32 LE length ‖ payload`, as `IdentityIndex` reads
    /// them), ordered as `ServiceMatcher.ordered` orders an unmatched list: rank, then recent
    /// use, then record id. The buffer is kept as it is; rows point into it.
    init(framedBuckets text: [UInt8], usage: UsageLog) throws(FormatError) {
        guard text.count <= Int32.max else { throw .badLength }  // rows hold 32-bit positions
        var rows: [Row] = []
        var frames = ByteReader(text)
        func bounds(_ range: Range<Int>) -> (Int32, Int32) { (Int32(range.lowerBound), Int32(range.upperBound)) }
        while !frames.isAtEnd {
            let length = Int(try frames.integer(UInt32.self))
            let start = frames.offset
            _ = try frames.take(length)
            try IndexShardCoding.scanIdentities(text, in: start..<start + length) { scanned throws(FormatError) in
                rows.append(Row(
                    recordID: scanned.recordID, rank: scanned.rank, lastUsed: usage.lastUsed(scanned.recordID),
                    type: scanned.type, identifierBounds: bounds(scanned.identifier), userBounds: bounds(scanned.user)))
            }
        }
        rows.sort {
            ServiceMatcher.RankingKey(unmatchedRank: $0.rank, lastUsed: $0.lastUsed, id: $0.recordID.words)
                .precedes(ServiceMatcher.RankingKey(unmatchedRank: $1.rank, lastUsed: $1.lastUsed, id: $1.recordID.words))
        }
        self.text = text
        self.rows = rows
    }

    /// A listing of `identities` in the order given (a matched request, already ranked), so one
    /// printer serves every list.
    public init(_ identities: [PasswordCredentialIdentity]) {
        var text: [UInt8] = []
        var rows: [Row] = []
        rows.reserveCapacity(identities.count)
        func append(_ string: String) -> (Int32, Int32) {
            let start = Int32(text.count)
            text.append(contentsOf: string.utf8)
            return (start, Int32(text.count))
        }
        for identity in identities {
            // Identities from the store always name a valid record; anything else lists as zeros.
            let id = (try? RecordID(hex: identity.recordIdentifier)) ?? RecordID(words: IdentifierWords(high: 0, low: 0))
            rows.append(Row(
                recordID: id, rank: Int64(identity.rank), lastUsed: 0, type: identity.serviceIdentifier.type,
                identifierBounds: append(identity.serviceIdentifier.identifier), userBounds: append(identity.user)))
        }
        self.text = text
        self.rows = rows
    }

    public var count: Int { rows.count }

    /// The rows for which `isIncluded` holds, in order.
    public func filter(_ isIncluded: (Row) throws -> Bool) rethrows -> IdentityListing {
        var filtered = self
        filtered.rows = try rows.filter(isIncluded)
        return filtered
    }

    /// The buffer the rows' `identifier` and `user` ranges point into, valid only inside `body`.
    public func withUnsafeText<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try text.withUnsafeBufferPointer(body)
    }

    /// The service identifier's UTF-8 bytes, valid only inside `body`.
    public func withIdentifierBytes<Result>(of row: Row, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeText { try body(UnsafeBufferPointer(rebasing: $0[row.identifier])) }
    }

    /// The user name's UTF-8 bytes, valid only inside `body`.
    public func withUserBytes<Result>(of row: Row, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeText { try body(UnsafeBufferPointer(rebasing: $0[row.user])) }
    }

    /// The row as Apple's type.
    public func identity(_ row: Row) -> PasswordCredentialIdentity {
        PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(
                identifier: String(decoding: text[row.identifier], as: UTF8.self), type: row.type),
            user: String(decoding: text[row.user], as: UTF8.self),
            recordIdentifier: row.recordID.hex, rank: Int(row.rank))
    }
}
