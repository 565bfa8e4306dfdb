import CofferProvider
import CZlib
import CZstd

/// Decompresses a stream piece by piece (a backup read in constant memory): `read` fills the
/// caller's buffer from what `source` supplies. A stream that ends early, is corrupt, or has
/// bytes after its end is `CompressionError.corrupt`.
final class DecompressingReader {
    private let kind: BackupCompression
    /// Fills a buffer with compressed bytes: the count, 0 at the end of the input.
    private let source: (UnsafeMutableRawBufferPointer) throws -> Int
    private var input = [UInt8](repeating: 0, count: 1 << 20)
    private var inputStart = 0
    private var inputEnd = 0
    private var sourceEnded = false
    private var streamEnded = false
    private var zlib = z_stream()
    private var zstd: OpaquePointer?
    /// zstd's hint after the last call: 0 when a frame just ended.
    private var zstdRemaining = 1

    init(_ kind: BackupCompression, source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws(CompressionError) {
        self.kind = kind
        self.source = source
        switch kind {
        case .none: break
        case .gzip:
            guard inflateInit2_(&zlib, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw .failed("zlib could not start") }
        case .zstd:
            guard let context = ZSTD_createDStream() else { throw .failed("libzstd could not start") }
            zstd = context
        }
    }

    deinit {
        if kind == .gzip { inflateEnd(&zlib) }
        if let zstd { ZSTD_freeDStream(zstd) }
    }

    /// Refills the input when it is used up; false at the end of the source.
    private func refill() throws -> Bool {
        if inputStart < inputEnd { return true }
        if sourceEnded { return false }
        let count = try input.withUnsafeMutableBytes { try source($0) }
        inputStart = 0
        inputEnd = count
        if count == 0 { sourceEnded = true }
        return count > 0
    }

    /// Fills `buffer` as far as the stream goes: the count, fewer only at its end (0 after it).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let got = try step(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if got == 0 && streamEnded { break }
            filled += got
        }
        return filled
    }

    /// One decompression call: the bytes it produced (possibly 0 while it reads input).
    private func step(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if streamEnded { return 0 }
        let more = try refill()
        switch kind {
        case .none:
            guard more else { streamEnded = true; return 0 }
            let count = min(buffer.count, inputEnd - inputStart)
            input.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + inputStart, byteCount: count) }
            inputStart += count
            return count
        case .gzip:
            guard more else { throw CompressionError.corrupt("the gzip stream is truncated or corrupt") }
            let (produced, status) = input.withUnsafeMutableBytes { source -> (Int, Int32) in
                zlib.next_in = source.baseAddress!.assumingMemoryBound(to: Bytef.self) + inputStart
                zlib.avail_in = uInt(inputEnd - inputStart)
                zlib.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                zlib.avail_out = uInt(buffer.count)
                let status = inflate(&zlib, Z_NO_FLUSH)
                inputStart = inputEnd - Int(zlib.avail_in)
                return (buffer.count - Int(zlib.avail_out), status)
            }
            switch status {
            case Z_STREAM_END:
                streamEnded = true
                try requireNothingAfter("gzip")
            case Z_OK, Z_BUF_ERROR: break
            default: throw CompressionError.corrupt("the gzip stream is truncated or corrupt")
            }
            return produced
        case .zstd:
            guard more else {
                guard zstdRemaining == 0 else { throw CompressionError.corrupt("the zstd stream is truncated or corrupt") }
                streamEnded = true
                return 0
            }
            let produced = try input.withUnsafeBytes { source -> Int in
                var inBuffer = ZSTD_inBuffer(src: source.baseAddress! + inputStart, size: inputEnd - inputStart, pos: 0)
                var outBuffer = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
                zstdRemaining = ZSTD_decompressStream(zstd, &outBuffer, &inBuffer)
                guard ZSTD_isError(zstdRemaining) == 0 else { throw CompressionError.corrupt("the zstd stream is truncated or corrupt") }
                inputStart += inBuffer.pos
                return outBuffer.pos
            }
            return produced
        }
    }

    private func requireNothingAfter(_ format: String) throws {
        guard inputStart == inputEnd, try !refill() else { throw CompressionError.corrupt("bytes after the \(format) stream") }
    }
}
