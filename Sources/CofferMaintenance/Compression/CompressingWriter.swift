import CofferProvider
import CZlib
import CZstd

/// Compresses a stream piece by piece (a backup of any size in constant memory): each `write`
/// passes what the compressor has ready to `sink`; `finish` ends the gzip member or zstd frame.
final class CompressingWriter {
    private let kind: BackupCompression
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private var zlib = z_stream()
    private var zstd: OpaquePointer?
    private var output = [UInt8](repeating: 0, count: 1 << 20)

    init(_ kind: BackupCompression, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws(CompressionError) {
        self.kind = kind
        self.sink = sink
        switch kind {
        case .none: break
        case .gzip:
            // 15 window bits + 16: a gzip header and trailer (RFC 1952), as gzip(1) writes.
            guard deflateInit2_(&zlib, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
            else { throw .failed("zlib could not start") }
        case .zstd:
            guard let context = ZSTD_createCCtx() else { throw .failed("libzstd could not start") }
            zstd = context
            guard ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)) == 0 else { throw .failed("libzstd refused level 3") }
        }
    }

    deinit {
        if kind == .gzip { deflateEnd(&zlib) }
        if let zstd { ZSTD_freeCCtx(zstd) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try compress(bytes, ending: false)
    }

    func finish() throws {
        try compress(UnsafeRawBufferPointer(start: nil, count: 0), ending: true)
    }

    private func compress(_ bytes: UnsafeRawBufferPointer, ending: Bool) throws {
        switch kind {
        case .none:
            if !bytes.isEmpty { try sink(bytes) }
        case .gzip:
            zlib.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
            zlib.avail_in = uInt(bytes.count)
            var status: Int32 = Z_OK
            repeat {
                let produced = try output.withUnsafeMutableBytes { buffer -> Int in
                    zlib.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    zlib.avail_out = uInt(buffer.count)
                    status = deflate(&zlib, ending ? Z_FINISH : Z_NO_FLUSH)
                    guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw CompressionError.failed("zlib could not compress (\(status))") }
                    return buffer.count - Int(zlib.avail_out)
                }
                if produced > 0 { try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0.prefix(produced))) } }
            } while ending ? status != Z_STREAM_END : (zlib.avail_in > 0 || zlib.avail_out == 0)
        case .zstd:
            var input = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
            var remaining = 0
            repeat {
                let produced = try output.withUnsafeMutableBytes { buffer -> Int in
                    var out = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
                    remaining = ZSTD_compressStream2(zstd, &out, &input, ending ? ZSTD_e_end : ZSTD_e_continue)
                    guard ZSTD_isError(remaining) == 0 else { throw CompressionError.failed("libzstd could not compress") }
                    return out.pos
                }
                if produced > 0 { try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0.prefix(produced))) } }
            } while ending ? remaining != 0 : input.pos < input.size
        }
    }
}
