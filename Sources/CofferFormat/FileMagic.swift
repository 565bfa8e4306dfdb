import CofferModel
import CofferSupport
/// The 8-byte preamble of every Coffer file: `COFFER`, a type byte, the format version (SPEC.md §3.3).
public enum FileType: UInt8, Sendable {
    case vaultHeader = 0x56  // 'V'
    case record = 0x52       // 'R'
    case indexManifest = 0x4D  // 'M'
    case indexShard = 0x53   // 'S'
    case indexJournal = 0x4A  // 'J'
    /// A device's snapshot of every identity bucket (SPEC.md §7.6), never in the container.
    case identityListing = 0x4C  // 'L'
    /// A device's completion table (SPEC.md §7.6): the names a shell's Tab offers.
    case completionTable = 0x43  // 'C'
    /// A device's large index shard split in parts (SPEC.md §7.6).
    case bucketParts = 0x50  // 'P'
    /// A deleted record's tombstone (SPEC.md §15.2), in a synced container only.
    case tombstone = 0x54  // 'T'
    /// The record key's seal over the vault header (SPEC.md §15.2), in a synced container only.
    case headerSeal = 0x48  // 'H'
    /// A team vault's membership chain and sealed keys (SPEC.md §16.3).
    case teamKeys = 0x4B  // 'K'
    /// A device's quick unlock: the vault key wrapped for a PIN (SPEC.md §8.6), never in the container.
    case quickUnlock = 0x51  // 'Q'
    /// An item's attached file, sealed as a stream (SPEC.md §6.7).
    case attachment = 0x41  // 'A'
}

public enum FileMagic {
    public static let formatVersion: UInt8 = 1
    public static let length = 8
    private static let signature = Array("COFFER".utf8)

    /// The preamble for `type`, in `version` (the format version unless a file type has its own).
    public static func bytes(for type: FileType, version: UInt8 = formatVersion) -> [UInt8] {
        signature + [type.rawValue, version]
    }

    /// The versions a reader implements for each file type. The index manifest's version names
    /// the index layout, 1 to 4 (SPEC.md §7.2); the device's derived tables are at version 5 (§7.6).
    static func versions(of type: FileType) -> ClosedRange<UInt8> {
        switch type {
        case .indexManifest: 1...4
        // A device's own derived files (SPEC.md §7.6): older versions are rebuilt, never read.
        case .identityListing, .completionTable: 5...5
        case .teamKeys: 1...2  // 2: with removal notices (SPEC.md §16.3)
        default: formatVersion...formatVersion
        }
    }

    /// Checks the preamble of `bytes`.
    /// - Returns: the file's version, one `versions(of: type)` holds.
    /// - Throws: `badMagic` for another file type or no Coffer file, `unsupportedVersion` for
    ///   another version, `badLength` when shorter than the preamble.
    @discardableResult
    public static func check(_ bytes: [UInt8], is type: FileType) throws(FormatError) -> UInt8 {
        guard bytes.count >= length else { throw .badLength }
        guard Array(bytes[0..<6]) == signature, bytes[6] == type.rawValue else { throw .badMagic }
        guard versions(of: type).contains(bytes[7]) else { throw .unsupportedVersion(bytes[7]) }
        return bytes[7]
    }
}

/// Little-endian integer encoding for the fixed layouts.
package enum LittleEndian {
    package static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// One unaligned load (a byte loop cost a fill 0.25 M instructions in a full bucket).
    /// - Precondition: `offset + MemoryLayout<T>.size <= bytes.count` (callers check bounds).
    package static func read<T: FixedWidthInteger>(_ type: T.Type, from bytes: [UInt8], at offset: Int) -> T {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count)
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    package static func write<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<MemoryLayout<T>.size {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }
}
