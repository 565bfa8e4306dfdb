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

    /// The whole of `bytes` compressed (`CompressingWriter` streams).
    public func compress(_ bytes: [UInt8]) throws(CompressionError) -> [UInt8] {
        var output: [UInt8] = []
        do {
            let writer = try CompressingWriter(self) { output += $0 }
            try bytes.withUnsafeBytes { try writer.write($0) }
            try writer.finish()
        } catch let error as CompressionError {
            throw error
        } catch {
            throw .failed("\(error)")
        }
        return output
    }

    /// Decompresses at most `limit` bytes: more is refused as a decompression bomb rather than
    /// inflated into memory (`DecompressingReader` streams).
    public func decompress(_ bytes: [UInt8], limit: Int) throws(CompressionError) -> [UInt8] {
        var offset = 0
        var output: [UInt8] = []
        do {
            let reader = try DecompressingReader(self) { buffer in
                let count = min(buffer.count, bytes.count - offset)
                guard count > 0 else { return 0 }
                bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
                offset += count
                return count
            }
            var piece = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try piece.withUnsafeMutableBytes { try reader.read(into: $0) }
                output += piece.prefix(count)
                guard output.count <= limit else { throw CompressionError.tooLarge(limit) }
                if count < piece.count { break }
            }
        } catch let error as CompressionError {
            throw error
        } catch {
            throw .failed("\(error)")
        }
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
