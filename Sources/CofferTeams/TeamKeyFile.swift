import CofferStore
/// `team.coffer` (SPEC.md §16.3): a team vault's key sealed to each member, and its membership
/// chain with the team's earlier keys sealed under that key. No file I/O here.
///
///     0   8  preamble "COFFER" 'K' version (1, or 2 when it carries removal notices)
///     8  16  team vault id
///     24  2  S, the number of slots (1…4096), u16 LE; then S × (16 slot id ‖ 80 sealed key)
///     version 2 only: u16 LE F (1…64), then F × (16 slot id ‖ u16 LE length ‖ sealed notice)
///        24  nonce
///         …  AEAD ciphertext of the membership block (SPEC.md §16.3), then the 16-byte tag
///
/// A copy of the remote shows how many members a team has, and how many of its recent
/// removals are noticed, and nothing else: not who they are (slot ids are keyed by the team),
/// not their names, not the team's.
public struct TeamKeyFile: Equatable, Sendable {
    public struct Slot: Equatable, Sendable {
        /// `TeamKeyFile.slotID(of:teamID:)` of the member's signing key.
        public let slotID: [UInt8]
        /// `crypto_box_seal` of the vault key to the member's receiving key.
        public let sealedKey: [UInt8]

        public init(slotID: [UInt8], sealedKey: [UInt8]) {
            self.slotID = slotID
            self.sealedKey = sealedKey
        }
    }

    /// A removal notice (SPEC.md §16.3): the remove entry that removed a member, sealed to that
    /// member's receiving key under their slot id, so that their device can say who removed them
    /// and when — the membership list itself is sealed under a key they no longer get.
    public struct Notice: Equatable, Sendable {
        public let slotID: [UInt8]
        /// `crypto_box_seal` of the remove entry's bytes (§16.2) to the removed member.
        public let sealedEntry: [UInt8]

        public init(slotID: [UInt8], sealedEntry: [UInt8]) {
            self.slotID = slotID
            self.sealedEntry = sealedEntry
        }
    }

    public let teamID: VaultID
    public var slots: [Slot]
    /// The notices of the latest removals, oldest first (at most `maximumNotices`).
    public var notices: [Notice] = []
    /// Nonce ‖ ciphertext ‖ tag of the membership block.
    public var sealedMembership: [UInt8]

    /// Version 1 carries no notices; a file with notices is version 2.
    public var version: UInt8 { notices.isEmpty ? 1 : 2 }
    static let maximumNotices = 64
    static let maximumNoticeLength = SealedBoxKeyPair.overhead + MembershipEntry.maximumLength

    static let maximumMembers = 4096
    static let slotIDLength = 16
    static let slotLength = slotIDLength + VaultKeys.length + SealedBoxKeyPair.overhead
    static let maximumBlockLength = 2 + maximumMembers * 4 * (2 + MembershipEntry.maximumLength) + 2 + maximumMembers * 4 * VaultKeys.length
    public static let maximumFileLength = 8 + 16 + 2 + maximumMembers * slotLength + 2 + maximumNotices * (18 + maximumNoticeLength)
        + 24 + maximumBlockLength + 16

    public init(teamID: VaultID, slots: [Slot], notices: [Notice] = [], sealedMembership: [UInt8]) {
        self.teamID = teamID
        self.slots = slots
        self.notices = notices
        self.sealedMembership = sealedMembership
    }

    /// A member's slot id: BLAKE2b-128 of "COFFER team slot" ‖ team vault id ‖ their signing key,
    /// so that one person's slots in two teams cannot be linked by a copy of both remotes.
    public static func slotID(of signingKey: [UInt8], teamID: VaultID) -> [UInt8] {
        (try? BLAKE2b.hash(Array("COFFER team slot".utf8) + teamID.bytes + signingKey, length: slotIDLength)) ?? []
    }

    /// The associated data of the membership block: the file's preamble ‖ team vault id.
    static func associatedData(teamID: VaultID, version: UInt8 = 1) -> [UInt8] {
        FileMagic.bytes(for: .teamKeys, version: version) + teamID.bytes
    }

    public var encoded: [UInt8] {
        var bytes = FileMagic.bytes(for: .teamKeys, version: version) + teamID.bytes + LittleEndian.bytes(UInt16(slots.count))
        for slot in slots { bytes += slot.slotID + slot.sealedKey }
        if !notices.isEmpty {
            bytes += LittleEndian.bytes(UInt16(notices.count))
            for notice in notices { bytes += notice.slotID + LittleEndian.bytes(UInt16(notice.sealedEntry.count)) + notice.sealedEntry }
        }
        return bytes + sealedMembership
    }

    /// Parses the file's shape; what it holds is judged by `TeamKeys`.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> TeamKeyFile {
        let version = try FileMagic.check(bytes, is: .teamKeys)
        guard bytes.count >= 26, bytes.count <= maximumFileLength else { throw .badLength }
        let teamID = try VaultID(bytes: bytes[8..<24])
        let count = Int(bytes[24]) | Int(bytes[25]) << 8
        guard count >= 1, count <= maximumMembers else { throw .nonCanonical("\(count) slots") }
        var end = 26 + count * slotLength
        guard bytes.count >= end + 24 + 16 else { throw .badLength }
        let slots = (0..<count).map { index in
            let start = 26 + index * slotLength
            return Slot(slotID: Array(bytes[start..<(start + slotIDLength)]), sealedKey: Array(bytes[(start + slotIDLength)..<(start + slotLength)]))
        }
        var notices: [Notice] = []
        if version == 2 {
            guard bytes.count >= end + 2 else { throw .badLength }
            let noticeCount = Int(bytes[end]) | Int(bytes[end + 1]) << 8
            guard (1...maximumNotices).contains(noticeCount) else { throw .nonCanonical("\(noticeCount) removal notices") }
            end += 2
            for _ in 0..<noticeCount {
                guard bytes.count >= end + slotIDLength + 2 else { throw .badLength }
                let length = Int(bytes[end + slotIDLength]) | Int(bytes[end + slotIDLength + 1]) << 8
                let start = end + slotIDLength + 2
                guard length > SealedBoxKeyPair.overhead, length <= maximumNoticeLength, bytes.count >= start + length else { throw .badLength }
                notices.append(Notice(slotID: Array(bytes[end..<(end + slotIDLength)]), sealedEntry: Array(bytes[start..<(start + length)])))
                end = start + length
            }
            guard bytes.count >= end + 24 + 16 else { throw .badLength }
        }
        return TeamKeyFile(teamID: teamID, slots: slots, notices: notices, sealedMembership: Array(bytes[end...]))
    }
}

/// The plaintext of `team.coffer`'s sealed part (SPEC.md §16.3):
///
///     2  E, the number of entries (1…16384), u16 LE; then E × (u16 LE length ‖ entry, §16.2)
///     2  P, the number of earlier vault keys, u16 LE; then P × 32 bytes, newest first
struct MembershipBlock {
    var entries: [MembershipEntry]
    var earlierKeys: [SecureBytes]

    /// The plaintext; the caller wipes it.
    var encoded: [UInt8] {
        var bytes = LittleEndian.bytes(UInt16(entries.count))
        for entry in entries {
            let encoded = entry.encoded
            bytes += LittleEndian.bytes(UInt16(encoded.count)) + encoded
        }
        bytes += LittleEndian.bytes(UInt16(earlierKeys.count))
        for key in earlierKeys { key.withUnsafeBytes { bytes += $0 } }
        return bytes
    }

    static func decode(_ plain: UnsafeRawBufferPointer) throws(FormatError) -> MembershipBlock {
        let bytes = Array(plain.bindMemory(to: UInt8.self))
        var offset = 0
        func count16() throws(FormatError) -> Int {
            guard offset + 2 <= bytes.count else { throw .badLength }
            defer { offset += 2 }
            return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
        }
        let entryCount = try count16()
        guard entryCount >= 1 else { throw .nonCanonical("no membership entry") }
        var entries: [MembershipEntry] = []
        for _ in 0..<entryCount {
            let length = try count16()
            guard offset + length <= bytes.count else { throw .badLength }
            entries.append(try MembershipEntry.decode(bytes[offset..<(offset + length)]))
            offset += length
        }
        let keyCount = try count16()
        guard bytes.count == offset + keyCount * VaultKeys.length else { throw .badLength }
        var keys: [SecureBytes] = []
        for index in 0..<keyCount {
            let start = offset + index * VaultKeys.length
            guard let key = try? SecureBytes(copying: plain[start..<(start + VaultKeys.length)]) else { throw .badLength }
            keys.append(key)
        }
        return MembershipBlock(entries: entries, earlierKeys: keys)
    }
}
