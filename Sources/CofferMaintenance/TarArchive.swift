import CofferProvider
import FoundationEssentials

/// The POSIX ustar format, enough for vault backups that GNU tar reads (and for reading them
/// back): regular files and directories, paths under 100 bytes, no links; a size past ustar's
/// 8 GiB in GNU's base-256 form. Written and read as a stream (`TarWriter`, `TarReader`), so an
/// attachment of any size passes through in constant memory; `encode` and `decode` hold a small
/// archive whole.
enum TarArchive {
    /// One entry held in memory.
    struct Entry: Equatable {
        enum Kind: Equatable { case file, directory }
        let path: String
        let kind: Kind
        let mode: Int
        let contents: [UInt8]
    }

    /// What a header block says.
    struct Header: Equatable {
        let path: String
        let kind: Entry.Kind
        let mode: Int
        let size: UInt64
    }

    static let blockSize = 512
    /// The largest size ustar's 11 octal digits hold; larger ones are written in base 256.
    static let largestOctalSize: UInt64 = (1 << 33) - 1

    static func padding(after size: UInt64) -> Int { Int((UInt64(blockSize) - size % UInt64(blockSize)) % UInt64(blockSize)) }

    static func block(for entry: Header, modificationTime: Int) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: blockSize)
        func put(_ text: String, at offset: Int, length: Int) {
            for (index, byte) in text.utf8.prefix(length).enumerated() { header[offset + index] = byte }
        }
        func octal(_ value: Int, at offset: Int, length: Int) {
            put(String(value, radix: 8).leftPadded(to: length - 1), at: offset, length: length - 1)
        }
        put(entry.kind == .directory ? entry.path + "/" : entry.path, at: 0, length: 100)
        octal(entry.mode, at: 100, length: 8)
        octal(Int(CurrentUser.id), at: 108, length: 8)
        octal(Int(CurrentUser.groupID), at: 116, length: 8)
        if entry.size <= largestOctalSize {
            octal(Int(entry.size), at: 124, length: 12)
        } else {  // GNU's base-256: a first byte 0x80, then the size big-endian
            header[124] = 0x80
            for index in 0..<8 { header[128 + index] = UInt8(truncatingIfNeeded: entry.size >> (56 - 8 * UInt64(index))) }
        }
        octal(modificationTime, at: 136, length: 12)
        put("        ", at: 148, length: 8)  // checksum field counts as spaces while summing
        header[156] = entry.kind == .directory ? UInt8(ascii: "5") : UInt8(ascii: "0")
        put("ustar", at: 257, length: 6)
        put("00", at: 263, length: 2)
        let checksum = header.reduce(0) { $0 + Int($1) }
        put(String(checksum, radix: 8).leftPadded(to: 6) + "\0 ", at: 148, length: 8)
        return header
    }

    enum DecodeError: Error, Equatable { case malformed(String) }

    /// Parses a header block; `nil` for the all-zero block that ends an archive. Rejects anything
    /// but plain files and directories with relative paths free of `..` (no archive can write
    /// outside the directory it is restored into).
    static func parse(_ header: [UInt8], at offset: UInt64) throws(DecodeError) -> Header? {
        if header.allSatisfy({ $0 == 0 }) { return nil }
        let stored = octalValue(header[148..<156])
        let computed = header[0..<148].reduce(0) { $0 + Int($1) } + 8 * 32 + header[156...].reduce(0) { $0 + Int($1) }
        guard stored.map(Int.init) == computed else { throw .malformed("bad header checksum at byte \(offset)") }
        let name = string(header[0..<100])
        let prefix = String(decoding: header[257..<263], as: UTF8.self).hasPrefix("ustar") ? string(header[345..<500]) : ""
        var path = prefix.isEmpty ? name : prefix + "/" + name
        let kind: Entry.Kind
        switch header[156] {
        case UInt8(ascii: "0"), 0: kind = .file
        case UInt8(ascii: "5"): kind = .directory
        default: throw .malformed("\(path): only regular files and directories belong in a vault backup")
        }
        while path.hasSuffix("/") { path.removeLast() }
        if path.hasPrefix("./") { path.removeFirst(2) }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.hasPrefix("/"), !components.contains(".."), !components.contains("") || path == "." else {
            throw .malformed("unsafe path '\(path)'")
        }
        let size: UInt64
        if header[124] == 0x80 {
            guard header[125..<128].allSatisfy({ $0 == 0 }) else { throw .malformed("\(path): a size beyond any file") }
            size = header[128..<136].reduce(0) { $0 << 8 | UInt64($1) }
        } else {
            guard let octal = octalValue(header[124..<136]) else { throw .malformed("\(path): a bad size") }
            size = octal
        }
        return Header(path: path, kind: kind, mode: octalValue(header[100..<108]).map(Int.init) ?? 0o600, size: kind == .file ? size : 0)
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func octalValue(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        let text = string(bytes).trimmingSpaces()
        return text.isEmpty ? 0 : UInt64(text, radix: 8)
    }

    // MARK: Whole archives in memory

    static func encode(_ entries: [Entry], modificationTime: Int = Int(Date().timeIntervalSince1970)) throws -> [UInt8] {
        var archive: [UInt8] = []
        let writer = TarWriter(modificationTime: modificationTime) { archive += $0 }
        for entry in entries {
            try writer.add(Header(path: entry.path, kind: entry.kind, mode: entry.mode, size: UInt64(entry.contents.count))) { write in
                try entry.contents.withUnsafeBytes { try write($0) }
            }
        }
        try writer.finish()
        return archive
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeError) -> [Entry] {
        var offset = 0
        let reader = TarReader { buffer in
            let count = min(buffer.count, bytes.count - offset)
            if count > 0 { bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) } }
            offset += count
            return count
        }
        var entries: [Entry] = []
        do {
            while let header = try reader.next() {
                var contents: [UInt8] = []
                try reader.contents { contents += $0 }
                if header.path != "." { entries.append(Entry(path: header.path, kind: header.kind, mode: header.mode, contents: contents)) }
            }
        } catch let error as DecodeError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
        return entries
    }
}

/// Writes a tar archive to `sink` entry by entry, a file's contents in pieces.
final class TarWriter {
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let modificationTime: Int

    init(modificationTime: Int = Int(Date().timeIntervalSince1970), sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        self.modificationTime = modificationTime
    }

    /// Writes `header`, then what `contents` writes — exactly `header.size` bytes, or this throws.
    func add(_ header: TarArchive.Header, contents: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void = { _ in }) throws {
        try TarArchive.block(for: header, modificationTime: modificationTime).withUnsafeBytes { try sink($0) }
        var written: UInt64 = 0
        try contents { piece in
            written += UInt64(piece.count)
            guard written <= header.size else { throw TarArchive.DecodeError.malformed("\(header.path) grew while it was written") }
            if !piece.isEmpty { try sink(piece) }
        }
        guard written == header.size else { throw TarArchive.DecodeError.malformed("\(header.path) shrank while it was written") }
        try [UInt8](repeating: 0, count: TarArchive.padding(after: header.size)).withUnsafeBytes { try sink($0) }
    }

    /// The two zero blocks that end an archive.
    func finish() throws {
        try [UInt8](repeating: 0, count: TarArchive.blockSize * 2).withUnsafeBytes { try sink($0) }
    }
}

/// Reads a tar archive entry by entry from `source` (which fills a buffer: fewer bytes only at
/// its end), a file's contents in pieces of at most 1 MiB.
final class TarReader {
    private let source: (UnsafeMutableRawBufferPointer) throws -> Int
    private var offset: UInt64 = 0
    /// The current entry's bytes not yet read, and the padding after them.
    private var unread: UInt64 = 0
    private var padding = 0
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    init(source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        self.source = source
    }

    /// The next entry's header (the rest of the current entry skipped), or `nil` at the end.
    func next() throws -> TarArchive.Header? {
        try contents { _ in }
        var block = [UInt8](repeating: 0, count: TarArchive.blockSize)
        let count = try block.withUnsafeMutableBytes { try source($0) }
        guard count == TarArchive.blockSize else { throw TarArchive.DecodeError.malformed("no end-of-archive marker") }
        guard let header = try TarArchive.parse(block, at: offset) else { return nil }
        offset += UInt64(TarArchive.blockSize)
        unread = header.size
        padding = TarArchive.padding(after: header.size)
        return header
    }

    /// Passes the current entry's contents to `body` in pieces (the rest of them, if some were read).
    func contents(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        while unread > 0 {
            let wanted = Int(min(unread, UInt64(buffer.count)))
            let count = try buffer.withUnsafeMutableBytes { try source(UnsafeMutableRawBufferPointer(rebasing: $0.prefix(wanted))) }
            guard count == wanted else { throw TarArchive.DecodeError.malformed("an entry is truncated at byte \(offset + UInt64(count))") }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            unread -= UInt64(count)
            offset += UInt64(count)
        }
        if padding > 0 {
            let count = try buffer.withUnsafeMutableBytes { try source(UnsafeMutableRawBufferPointer(rebasing: $0.prefix(padding))) }
            guard count == padding else { throw TarArchive.DecodeError.malformed("an entry is truncated at byte \(offset + UInt64(count))") }
            offset += UInt64(padding)
            padding = 0
        }
    }
}
