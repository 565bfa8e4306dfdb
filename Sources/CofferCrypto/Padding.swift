import CSodium

/// ISO/IEC 7816-4 padding (`sodium_pad` / `sodium_unpad`), so ciphertext sizes reveal only a
/// multiple of the block size, not the length of a password or a note.
public enum Padding {
    /// Record plaintexts are padded to a multiple of this (SPEC.md §6.2).
    public static let recordBlockSize = 512

    /// `bytes` followed by 0x80 and zeros up to the next multiple of `blockSize` (always ≥ 1 byte added).
    public static func pad(_ bytes: [UInt8], blockSize: Int) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        var buffer = bytes + [UInt8](repeating: 0, count: blockSize)
        var paddedLength = 0
        let status = buffer.withUnsafeMutableBufferPointer {
            sodium_pad(&paddedLength, $0.baseAddress!, bytes.count, blockSize, $0.count)
        }
        guard status == 0 else { throw .invalidPadding }
        let padded = Array(buffer[0..<paddedLength])
        buffer.withUnsafeMutableBytes { Sodium.wipe($0) }
        return padded
    }

    /// The unpadded length of `padded`.
    /// - Throws: `CryptoError.invalidPadding` if the padding is malformed.
    public static func unpaddedLength(of padded: UnsafeRawBufferPointer, blockSize: Int) throws(CryptoError) -> Int {
        try Sodium.ready()
        guard padded.count > 0, padded.count % blockSize == 0 else { throw .invalidPadding }
        var length = 0
        let status = sodium_unpad(&length, padded.baseAddress!.assumingMemoryBound(to: UInt8.self), padded.count, blockSize)
        guard status == 0 else { throw .invalidPadding }
        return length
    }

    /// `unpaddedLength(of:blockSize:)` in time that depends on the padding's length, for index
    /// shards only: the length of an identity bucket is nothing the threat model hides from a
    /// process that could time this one (a same-user attacker can read the device's index key,
    /// SPEC.md §2), and `sodium_unpad`'s constant-time scan of a whole block per shard was a
    /// seventh of listing 1,000 identities. Records keep the constant-time version.
    /// - Throws: `CryptoError.invalidPadding` exactly when `sodium_unpad` would.
    public static func unpaddedLengthInVariableTime(of padded: UnsafeRawBufferPointer, blockSize: Int) throws(CryptoError) -> Int {
        guard padded.count > 0, blockSize > 0, padded.count % blockSize == 0 else { throw .invalidPadding }
        let lowest = padded.count - blockSize
        var index = padded.count - 1
        while index > lowest && padded[index] == 0 { index -= 1 }
        guard padded[index] == 0x80 else { throw .invalidPadding }
        return index
    }
}
