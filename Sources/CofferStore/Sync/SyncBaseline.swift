import CofferFormat
import FoundationEssentials

/// What this device committed last, kept so that the next sync stages only what changed since
/// (SPEC.md §15.4): `git add -A` of a million files stats each one and rewrites git's index
/// twice — 11 s of a later sync of 100 edits.
///
/// The records come from the ledger: the baseline names the ledger shard of each record shard
/// as it was at the commit and keeps a copy of each (they are replaced, never rewritten), so the
/// entries that differ between a copy and the shard now are the records that changed. The
/// shard directories' status tells where a file came or went that no ledger follows (an
/// attachment, a tombstone, a file planted in `records/`); every tombstone is staged, which git
/// skips unless its status changed. The header, its seal and a team's key file are always
/// staged, and so are the pending paths a merge left.
///
/// The baseline is valid for one tree, and only while git's own index is the file the commit
/// left (no other git touched it): then the index holds that tree, and everything in the
/// container that differs from it is among the paths this names. Anything else — no baseline,
/// a copy missing, another tree — and the sync stages everything, as a first one does.
struct SyncBaseline {
    /// The tree committed (or merged) with the container in this state.
    var tree: String
    /// git's index file after that commit: inode, size, change time.
    var index: [Int64]
    /// The ledger shard of each record shard `xx` (slot 256 + xx), `nil` for an empty one.
    var ledger: [ShardID?]
    /// Each of `records/<xx>/`, `tombstones/<xx>/` and `attachments/<xx>/`, in this order (768).
    var directories: [DirectoryStamp]
    /// Paths that may differ from `tree` whatever the ledger and directories say: after a merge
    /// commit, what this device wrote between its own commit and the merge (in the container,
    /// not in the merged tree).
    var pending: [String] = []

    /// A shard directory's status at the commit. A directory whose change time was within a
    /// second of the commit is `.unsettled`: file times tick coarsely (a jiffy), so a write in
    /// the same tick after the commit would leave it looking unchanged.
    enum DirectoryStamp: Equatable {
        case absent
        case present(inode: UInt64, modified: Int64, changed: Int64)
        case unsettled
    }

    static let magic = Array("coffer sync baseline 1\n".utf8)
    static let stampLength = 25
    static let parents = [GroupContainer.recordsName, GroupContainer.tombstonesName, GroupContainer.attachmentsName]
    static var directoryCount: Int { parents.count * 256 }
    static var ledgerCount: Int { IndexManifest.ledgerSlots }
    static let unsettledWindow: Int64 = 1_000_000_000

    /// The shard directory of stamp `position`: `records/<xx>`, then tombstones, then attachments.
    static func directoryPath(_ position: Int) -> (parent: String, shard: String) {
        (parents[position / 256], Hex.encode([UInt8(position % 256)]))
    }

    // MARK: Encoding (device state, SPEC.md §7.6)

    func encoded() -> [UInt8] {
        var bytes = Self.magic + Array(tree.utf8) + [0x0A]
        for value in index { bytes += LittleEndian.bytes(UInt64(bitPattern: value)) }
        for id in ledger { bytes += id?.bytes ?? [UInt8](repeating: 0, count: 16) }
        for stamp in directories {
            switch stamp {
            case .absent: bytes += [0] + [UInt8](repeating: 0, count: Self.stampLength - 1)
            case .unsettled: bytes += [2] + [UInt8](repeating: 0, count: Self.stampLength - 1)
            case .present(let inode, let modified, let changed):
                bytes += [1] + LittleEndian.bytes(inode) + LittleEndian.bytes(UInt64(bitPattern: modified)) + LittleEndian.bytes(UInt64(bitPattern: changed))
            }
        }
        bytes += LittleEndian.bytes(UInt32(pending.count))
        for path in pending { bytes += LittleEndian.bytes(UInt16(path.utf8.count)) + Array(path.utf8) }
        return bytes
    }

    /// `nil` for anything but a whole baseline of this layout.
    static func decode(_ bytes: [UInt8]) -> SyncBaseline? {
        guard bytes.starts(with: magic), let newline = bytes[magic.count...].firstIndex(of: 0x0A) else { return nil }
        let tree = String(decoding: bytes[magic.count..<newline], as: UTF8.self)
        guard [40, 64].contains(tree.utf8.count), tree.utf8.allSatisfy({ Hex.value(of: $0, uppercase: false) != nil }) else { return nil }
        var offset = newline + 1
        guard bytes.count - offset >= 3 * 8 + ledgerCount * 16 + directoryCount * stampLength + 4 else { return nil }
        func word() -> UInt64 {
            defer { offset += 8 }
            return LittleEndian.read(UInt64.self, from: bytes, at: offset)
        }
        let index = (0..<3).map { _ in Int64(bitPattern: word()) }
        var ledger: [ShardID?] = []
        for _ in 0..<ledgerCount {
            let id = bytes[offset..<offset + 16]
            offset += 16
            ledger.append(id.allSatisfy { $0 == 0 } ? nil : ShardID(validatedBytes: id))
        }
        var directories: [DirectoryStamp] = []
        for _ in 0..<directoryCount {
            let kind = bytes[offset]
            offset += 1
            let (inode, modified, changed) = (word(), word(), word())
            switch kind {
            case 0: directories.append(.absent)
            case 1: directories.append(.present(inode: inode, modified: Int64(bitPattern: modified), changed: Int64(bitPattern: changed)))
            case 2: directories.append(.unsettled)
            default: return nil
            }
        }
        var pending: [String] = []
        let count = Int(LittleEndian.read(UInt32.self, from: bytes, at: offset))
        offset += 4
        for _ in 0..<min(count, bytes.count) {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(LittleEndian.read(UInt16.self, from: bytes, at: offset))
            guard offset + 2 + length <= bytes.count else { return nil }
            let path = String(decoding: bytes[offset + 2..<offset + 2 + length], as: UTF8.self)
            guard SyncedPath(path) != nil else { return nil }
            pending.append(path)
            offset += 2 + length
        }
        guard pending.count == count, offset == bytes.count else { return nil }
        return SyncBaseline(tree: tree, index: index, ledger: ledger, directories: directories, pending: pending)
    }
}
