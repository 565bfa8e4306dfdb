import CofferProvider
import CZlib
import CZstd

/// How a backup archive is compressed (SPEC.md §11): chosen by the name when writing, by the
/// first bytes when reading, so a renamed file still opens. gzip through zlib, zstd through
/// libzstd — the two formats GNU tar's `-z` and `--zstd` read.
public enum BackupCompression: Sendable, Equatable {
    case none, gzip, zstd

    /// The compression a backup named `name` is written with: `.tar`, `.tar.gz`/`.tgz`,
    /// `.tar.zst`/`.tzst`; `nil` for a name that is no tar (a directory backup).
    public static func forName(_ name: String) -> BackupCompression? {
        let lower = name.lowercased()
        if lower.hasSuffix(".tar") { return BackupCompression.none }
        if lower.hasSuffix(".tar.gz") || lower.hasSuffix(".tgz") { return .gzip }
        if lower.hasSuffix(".tar.zst") || lower.hasSuffix(".tzst") { return .zstd }
        return nil
    }

    /// Names that look like an archive Coffer does not write (`.zip`, `.tar.xz`, `.gz` …): a
    /// backup must not silently become a directory called `b.zip`.
    public static func looksLikeOtherArchive(_ name: String) -> Bool {
        let lower = name.lowercased()
        let suffixes = [".zip", ".7z", ".rar", ".gz", ".xz", ".bz2", ".zst", ".lz", ".lzma", ".lz4", ".z", ".tbz", ".tbz2", ".txz",
                        ".tlz", ".cpio", ".ar", ".jar", ".tar.br", ".br"]
        return forName(name) == nil && suffixes.contains { lower.hasSuffix($0) }
    }

    /// What the bytes start with: gzip's `1f 8b`, zstd's frame magic `28 b5 2f fd`, else none.
    public static func detect(_ bytes: [UInt8]) -> BackupCompression {
        if bytes.starts(with: [0x1f, 0x8b]) { return .gzip }
        if bytes.starts(with: [0x28, 0xb5, 0x2f, 0xfd]) { return .zstd }
        return .none
    }

    public func compress(_ bytes: [UInt8]) throws(CompressionError) -> [UInt8] {
        switch self {
        case .none: return bytes
        case .gzip: return try Self.gzip(bytes)
        case .zstd: return try Self.zstdCompress(bytes)
        }
    }

    /// Decompresses at most `limit` bytes: more is refused as a decompression bomb rather than
    /// inflated into memory.
    public func decompress(_ bytes: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        switch self {
        case .none: return bytes
        case .gzip: return try Self.gunzip(bytes, limit: limit)
        case .zstd: return try Self.zstdDecompress(bytes, limit: limit)
        }
    }

    private static let chunk = 1 << 20

    private static func gzip(_ input: [UInt8]) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        // 15 window bits + 16: a gzip header and trailer (RFC 1952), as gzip(1) writes.
        guard deflateInit2_(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .failed("zlib could not start") }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        var input = input
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .failed("zlib could not compress (\(status))") }
        return Array(output.prefix(Int(stream.total_out)))
    }

    private static func gunzip(_ input: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw .failed("zlib could not start") }
        defer { inflateEnd(&stream) }
        var input = input
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK {
                buffer.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                }
                output += buffer[0..<(chunk - Int(stream.avail_out))]
                if output.count > limit { status = Z_MEM_ERROR; return }
                if status == Z_BUF_ERROR && stream.avail_in == 0 { return }
            }
        }
        guard output.count <= limit else { throw .tooLarge(limit) }
        guard status == Z_STREAM_END else { throw .corrupt("the gzip stream is truncated or corrupt") }
        guard stream.avail_in == 0 else { throw .corrupt("bytes after the gzip stream") }
        return output
    }

    private static func zstdCompress(_ input: [UInt8]) throws(CompressionError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let written = ZSTD_compress(&output, output.count, input, input.count, 3)
        guard ZSTD_isError(written) == 0 else { throw .failed("libzstd could not compress") }
        return Array(output.prefix(written))
    }

    private static func zstdDecompress(_ input: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        guard let context = ZSTD_createDStream() else { throw .failed("libzstd could not start") }
        defer { ZSTD_freeDStream(context) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        var remaining = 0
        var failed = false
        input.withUnsafeBytes { source in
            var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while !failed && output.count <= limit {
                let filled = buffer.withUnsafeMutableBytes { destination -> Bool in
                    var outBuffer = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: 0)
                    remaining = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                    if ZSTD_isError(remaining) != 0 { failed = true }
                    output += destination.prefix(outBuffer.pos)
                    return outBuffer.pos == outBuffer.size
                }
                // Done when all input is read and the decoder had room to spare (zstd's manual).
                if inBuffer.pos == inBuffer.size && !filled { break }
            }
        }
        guard output.count <= limit else { throw .tooLarge(limit) }
        guard !failed, remaining == 0 else { throw .corrupt("the zstd stream is truncated or corrupt") }
        return output
    }
}

public enum CompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    case corrupt(String)
    case tooLarge(Int)
    case failed(String)

    public var description: String {
        switch self {
        case .corrupt(let reason): reason
        case .tooLarge(let limit): "it decompresses to more than \(limit >> 20) MiB: refused"
        case .failed(let reason): reason
        }
    }
}
