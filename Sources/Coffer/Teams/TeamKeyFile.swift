/// `team.coffer` (SPEC.md §19.3): a team vault's membership chain, its vault key sealed to
/// each member, and its earlier keys sealed under the current one. No file I/O here.
///
///     0   8  preamble "COFFER" 'K' 0x01
///     8  16  team vault id
///     24  2  E, the number of entries (1…4096), u16 LE; then E × (u16 LE length ‖ entry)
///         2  S, the number of slots, u16 LE; then S × (32 signing key ‖ 80 sealed vault key)
///         2  P, the number of earlier keys, u16 LE; when P > 0: 24 nonce ‖ AEAD of the P
///            earlier vault keys (32 bytes each, newest first) with their 16-byte tag
public struct TeamKeyFile: Equatable, Sendable {
    public struct Slot: Equatable, Sendable {
        public let signingKey: [UInt8]
        public let sealedKey: [UInt8]
    }

    public let teamID: VaultID
    public var entries: [MembershipEntry]
    public var slots: [Slot]
    public var earlierKeyCount: Int
    /// Nonce ‖ ciphertext ‖ tag of the earlier keys; empty when there are none.
    public var sealedEarlierKeys: [UInt8]

    static let maximumEntries = 4096
    static let slotLength = 32 + VaultKeys.length + SealedBoxKeyPair.overhead
    public static let maximumFileLength = 8 + 16 + 2 + maximumEntries * (2 + MembershipEntry.maximumLength) + 2 + maximumEntries * slotLength
        + 2 + 24 + maximumEntries * 32 + 16

    public var encoded: [UInt8] {
        var bytes = FileMagic.bytes(for: .teamKeys) + teamID.bytes + LittleEndian.bytes(UInt16(entries.count))
        for entry in entries {
            let encoded = entry.encoded
            bytes += LittleEndian.bytes(UInt16(encoded.count)) + encoded
        }
        bytes += LittleEndian.bytes(UInt16(slots.count))
        for slot in slots { bytes += slot.signingKey + slot.sealedKey }
        return bytes + LittleEndian.bytes(UInt16(earlierKeyCount)) + sealedEarlierKeys
    }

    public init(teamID: VaultID, entries: [MembershipEntry], slots: [Slot], earlierKeyCount: Int, sealedEarlierKeys: [UInt8]) {
        self.teamID = teamID
        self.entries = entries
        self.slots = slots
        self.earlierKeyCount = earlierKeyCount
        self.sealedEarlierKeys = sealedEarlierKeys
    }

    /// Parses the file's shape; the chain and the keys are judged by `TeamMembership` and
    /// `TeamKeys`.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> TeamKeyFile {
        try FileMagic.check(bytes, is: .teamKeys)
        guard bytes.count <= maximumFileLength else { throw .badLength }
        var offset = 8
        func take(_ count: Int) throws(FormatError) -> ArraySlice<UInt8> {
            guard count >= 0, offset + count <= bytes.count else { throw .badLength }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }
        func count16() throws(FormatError) -> Int {
            let slice = try take(2)
            return Int(slice[slice.startIndex]) | Int(slice[slice.startIndex + 1]) << 8
        }
        let teamID = try VaultID(bytes: take(16))
        let entryCount = try count16()
        guard entryCount >= 1, entryCount <= maximumEntries else { throw .nonCanonical("\(entryCount) membership entries") }
        var entries: [MembershipEntry] = []
        for _ in 0..<entryCount { entries.append(try MembershipEntry.decode(take(try count16()))) }
        let slotCount = try count16()
        var slots: [Slot] = []
        for _ in 0..<slotCount {
            slots.append(Slot(signingKey: Array(try take(32)), sealedKey: Array(try take(slotLength - 32))))
        }
        let earlier = try count16()
        let sealed = earlier == 0 ? [] : Array(try take(24 + earlier * 32 + 16))
        guard offset == bytes.count else { throw .badLength }
        return TeamKeyFile(teamID: teamID, entries: entries, slots: slots, earlierKeyCount: earlier, sealedEarlierKeys: sealed)
    }

    /// The associated data of the earlier keys: preamble ‖ team vault id ‖ the current key id.
    static func earlierKeysAssociatedData(teamID: VaultID, keyID: [UInt8]) -> [UInt8] {
        FileMagic.bytes(for: .teamKeys) + teamID.bytes + keyID
    }
}
