import CofferProvider
import FoundationEssentials

/// The POSIX ustar format, enough for vault backups that GNU tar reads (and for reading them
/// back): regular files and directories, paths under 100 bytes, no links. Pure: bytes in, bytes out.
enum TarArchive {
    struct Entry: Equatable {
        enum Kind: Equatable { case file, directory }
        let path: String
        let kind: Kind
        let mode: Int
        let contents: [UInt8]
    }

    static let blockSize = 512

    static func encode(_ entries: [Entry], modificationTime: Int = Int(Date().timeIntervalSince1970)) -> [UInt8] {
        var archive: [UInt8] = []
        for entry in entries {
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
            octal(entry.kind == .file ? entry.contents.count : 0, at: 124, length: 12)
            octal(modificationTime, at: 136, length: 12)
            put("        ", at: 148, length: 8)  // checksum field counts as spaces while summing
            header[156] = entry.kind == .directory ? UInt8(ascii: "5") : UInt8(ascii: "0")
            put("ustar", at: 257, length: 6)
            put("00", at: 263, length: 2)
            let checksum = header.reduce(0) { $0 + Int($1) }
            put(String(checksum, radix: 8).leftPadded(to: 6) + "\0 ", at: 148, length: 8)
            archive += header
            if entry.kind == .file {
                archive += entry.contents
                archive += [UInt8](repeating: 0, count: (blockSize - entry.contents.count % blockSize) % blockSize)
            }
        }
        return archive + [UInt8](repeating: 0, count: blockSize * 2)
    }

    enum DecodeError: Error, Equatable { case malformed(String) }

    /// Parses an archive; rejects anything but plain files and directories with relative paths
    /// free of `..` (no archive can write outside the directory it is restored into).
    static func decode(_ bytes: [UInt8]) throws(DecodeError) -> [Entry] {
        var entries: [Entry] = []
        var offset = 0
        while offset + blockSize <= bytes.count {
            let header = Array(bytes[offset..<offset + blockSize])
            if header.allSatisfy({ $0 == 0 }) { return entries }
            let stored = octalValue(header[148..<156])
            let computed = header[0..<148].reduce(0) { $0 + Int($1) } + 8 * 32 + header[156...].reduce(0) { $0 + Int($1) }
            guard stored == computed else { throw .malformed("bad header checksum at byte \(offset)") }
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
            guard let size = octalValue(header[124..<136]), size >= 0, offset + blockSize + size <= bytes.count else {
                throw .malformed("\(path): truncated")
            }
            let mode = octalValue(header[100..<108]) ?? 0o600
            let contents = kind == .file ? Array(bytes[(offset + blockSize)..<(offset + blockSize + size)]) : []
            if path != "." { entries.append(Entry(path: path, kind: kind, mode: mode, contents: contents)) }
            offset += blockSize + (size + blockSize - 1) / blockSize * blockSize
        }
        throw .malformed("no end-of-archive marker")
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func octalValue(_ bytes: ArraySlice<UInt8>) -> Int? {
        let text = string(bytes).trimmingSpaces()
        return text.isEmpty ? 0 : Int(text, radix: 8)
    }
}
