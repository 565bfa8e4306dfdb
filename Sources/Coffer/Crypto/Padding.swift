import CSodium

/// ISO/IEC 7816-4 padding (`sodium_pad` / `sodium_unpad`), so ciphertext sizes reveal only a
/// multiple of the block size, not the length of a password or a note.
public enum Padding {
    /// Record plaintexts are padded to a multiple of this (SPEC.md §5.2).
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
}
