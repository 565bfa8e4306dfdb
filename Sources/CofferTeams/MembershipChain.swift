import CofferStore
/// A team's membership as its chain of signed entries says it is (SPEC.md §16.2): verified
/// from the founding entry, entry by entry, by pure code (no keys, no files), like `SyncMerge`.
public struct TeamMembership: Equatable, Sendable {
    public struct Member: Equatable, Sendable {
        public let recipient: TeamRecipient
        public var name: String
        public var isAdmin: Bool
        /// Who added them (the founder: themselves) and when, by their clock.
        public let addedBy: [UInt8]
        public let addedAt: UInt64
    }

    public let teamID: VaultID
    public let teamName: String
    /// The founder's signing key: what every member pins when joining.
    public let founder: [UInt8]
    /// Current members in the order they were added.
    public private(set) var members: [Member] = []
    /// The id of the vault key in force (§16.2).
    public private(set) var keyID: [UInt8]
    /// Every earlier key id, oldest first: the keys the key history must hold.
    public private(set) var earlierKeyIDs: [[UInt8]] = []
    public let entries: [MembershipEntry]

    /// The number of entries and the hash of the last: what a device pins (§16.5).
    public var head: ChainHead { ChainHead(count: UInt64(entries.count), hash: entries.last?.hash ?? []) }

    public func member(_ signingKey: [UInt8]) -> Member? { members.first { $0.recipient.signingKey == signingKey } }

    /// How `other` stands to this chain: the same, longer and containing it, a prefix of it
    /// (`behind`), or another chain (`forked`).
    public func relation(of other: [MembershipEntry]) -> ChainRelation {
        let relation = head.relation(of: other)
        guard relation == .behind else { return relation }
        return other.isEmpty || entries[other.count - 1].hash != other[other.count - 1].hash ? .forked : .behind
    }

    /// Verifies `entries` as the chain of team `teamID`.
    /// - Parameter founder: the founder's key this device pinned when it joined, if any.
    /// - Throws: `TeamError.refused` naming the first entry that breaks a rule.
    public init(entries: [MembershipEntry], teamID: VaultID, founder pinned: [UInt8]? = nil) throws(TeamError) {
        guard let first = entries.first else { throw .refused("the membership list is empty") }
        guard first.action == .found, first.sequence == 0, first.previousHash == [UInt8](repeating: 0, count: 32),
              first.isAdmin, first.signer == first.subject.signingKey, !first.teamName.isEmpty
        else { throw .refused("entry 0 is not a founding entry signed by its founder") }
        if let pinned, pinned != first.subject.signingKey {
            throw .refused("the team was founded by another key than the one this device pinned when it joined")
        }
        self.teamID = teamID
        teamName = first.teamName
        founder = first.subject.signingKey
        keyID = first.keyID
        self.entries = entries
        var previous: MembershipEntry?
        for (position, entry) in entries.enumerated() {
            guard entry.hasValidSignature(teamID: teamID) else { throw .refused("entry \(position) has no valid signature") }
            guard entry.sequence == UInt64(position) else { throw .refused("entry \(position) says it is entry \(entry.sequence)") }
            if let previous {
                guard entry.previousHash == previous.hash else { throw .refused("entry \(position) does not follow entry \(position - 1)") }
                try apply(entry, at: position)
            } else {
                members = [Member(recipient: entry.subject, name: entry.name, isAdmin: true, addedBy: entry.signer, addedAt: entry.time)]
            }
            previous = entry
        }
    }

    /// One entry after the founding one, judged against the membership before it.
    private mutating func apply(_ entry: MembershipEntry, at position: Int) throws(TeamError) {
        guard entry.teamName.isEmpty, entry.action != .found else { throw .refused("entry \(position) founds the team a second time") }
        guard let signer = member(entry.signer), signer.isAdmin else {
            throw .refused("entry \(position) is signed by someone who was not an admin of the team at that point")
        }
        let index = members.firstIndex { $0.recipient.signingKey == entry.subject.signingKey }
        let rotates = entry.keyID != keyID
        switch entry.action {
        case .found:
            break
        case .add:
            guard index == nil else { throw .refused("entry \(position) adds someone who is already a member") }
            guard !members.contains(where: { $0.recipient.receivingKey == entry.subject.receivingKey }) else {
                throw .refused("entry \(position) adds a receiving key another member has")
            }
            guard !rotates else { throw .refused("entry \(position) changes the vault key without removing anyone") }
            members.append(Member(recipient: entry.subject, name: entry.name, isAdmin: entry.isAdmin, addedBy: entry.signer, addedAt: entry.time))
        case .remove:
            guard let index, members[index].recipient == entry.subject, !entry.isAdmin else {
                throw .refused("entry \(position) removes someone who is not a member")
            }
            guard rotates, !earlierKeyIDs.contains(entry.keyID) else {
                throw .refused("entry \(position) removes a member without a new vault key")
            }
            members.remove(at: index)
        case .role:
            guard let index, members[index].recipient == entry.subject, members[index].isAdmin != entry.isAdmin else {
                throw .refused("entry \(position) changes the role of someone who is not a member, or to the role they have")
            }
            guard !rotates else { throw .refused("entry \(position) changes the vault key without removing anyone") }
            members[index].isAdmin = entry.isAdmin
        }
        guard members.contains(where: \.isAdmin) else { throw .refused("entry \(position) leaves the team without an admin") }
        if rotates {
            earlierKeyIDs.append(keyID)
            keyID = entry.keyID
        }
    }
}

/// How one membership chain stands to another (SPEC.md §16.5).
public enum ChainRelation: Equatable, Sendable { case equal, extends, behind, forked }

/// How far a chain goes: its length and the hash of its last entry.
public struct ChainHead: Equatable, Sendable {
    public let count: UInt64
    public let hash: [UInt8]

    public init(count: UInt64, hash: [UInt8]) {
        self.count = count
        self.hash = hash
    }

    /// How `entries` stand to this head: the same chain, a longer one that contains it, a
    /// shorter one (`behind`: whether it is a prefix only the whole chain can tell) or another.
    public func relation(of entries: [MembershipEntry]) -> ChainRelation {
        let length = UInt64(entries.count)
        guard length >= count else { return .behind }
        guard count > 0, entries[Int(count) - 1].hash == hash else { return .forked }
        return length == count ? .equal : .extends
    }

    static let encodedLength = 40
    var encoded: [UInt8] { LittleEndian.bytes(count) + hash }

    init?(encoded bytes: [UInt8]) {
        guard bytes.count == Self.encodedLength else { return nil }
        self.init(count: LittleEndian.read(UInt64.self, from: bytes, at: 0), hash: Array(bytes[8...]))
    }
}

/// What a device pins of a team (SPEC.md §16.5), in its device state: the founder it joined,
/// the chain it accepted, and the longest chain it has seen on the remote.
struct TeamPin: Equatable, Sendable {
    var founder: [UInt8]
    var accepted: ChainHead
    var remoteCount: UInt64

    static let encodedLength = 32 + ChainHead.encodedLength + 8
    var encoded: [UInt8] { founder + accepted.encoded + LittleEndian.bytes(remoteCount) }

    init(founder: [UInt8], accepted: ChainHead, remoteCount: UInt64) {
        self.founder = founder
        self.accepted = accepted
        self.remoteCount = remoteCount
    }

    init?(encoded bytes: [UInt8]) {
        guard bytes.count == Self.encodedLength, let head = ChainHead(encoded: Array(bytes[32..<72])) else { return nil }
        self.init(founder: Array(bytes[0..<32]), accepted: head, remoteCount: LittleEndian.read(UInt64.self, from: bytes, at: 72))
    }
}

extension DeviceState {
    /// What this device has accepted of the team's membership chain.
    func teamPin() -> TeamPin? {
        read(Self.teamPinName, limit: TeamPin.encodedLength).flatMap(TeamPin.init(encoded:))
    }

    func setTeamPin(_ pin: TeamPin) throws(StorageError) {
        try write(pin.encoded, to: Self.teamPinName)
    }
}
