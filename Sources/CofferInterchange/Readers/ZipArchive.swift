import CofferProvider
import CZip

/// A zip archive held in memory (1Password's 1PUX), read with libzip loaded on use. Hostile
/// archives are refused: an entry path that could climb out of a directory (`..`, a leading `/`),
/// more entries than any export has, or a member larger than its `limit` — checked on the declared
/// size and again while reading, so a zip bomb never inflates past it.
final class ZipArchive {
    typealias SourceBufferCreate = @convention(c) (UnsafeRawPointer?, zip_uint64_t, Int32, UnsafeMutablePointer<zip_error_t>?) -> OpaquePointer?
    typealias OpenFromSource = @convention(c) (OpaquePointer, Int32, UnsafeMutablePointer<zip_error_t>?) -> OpaquePointer?
    typealias SourceFree = @convention(c) (OpaquePointer?) -> Void
    typealias NumEntries = @convention(c) (OpaquePointer, zip_flags_t) -> zip_int64_t
    typealias GetName = @convention(c) (OpaquePointer, zip_uint64_t, zip_flags_t) -> UnsafePointer<CChar>?
    typealias StatIndex = @convention(c) (OpaquePointer, zip_uint64_t, zip_flags_t, UnsafeMutablePointer<zip_stat_t>) -> Int32
    typealias OpenIndex = @convention(c) (OpaquePointer, zip_uint64_t, zip_flags_t) -> OpaquePointer?
    typealias Read = @convention(c) (OpaquePointer, UnsafeMutableRawPointer, zip_uint64_t) -> zip_int64_t
    typealias Close = @convention(c) (OpaquePointer) -> Int32
    typealias Discard = @convention(c) (OpaquePointer) -> Void

    static let maximumEntries = 100_000

    private let library: LoadedLibrary
    private let zip: OpaquePointer
    /// Keeps the bytes libzip reads from alive as long as the archive.
    private let buffer: UnsafeMutableRawBufferPointer
    /// Every entry's index by its path.
    private let entries: [String: zip_uint64_t]

    /// Opens `archive`, checking every entry's path.
    init(_ archive: [UInt8]) throws(ImportError) {
        do {
            library = try LoadedLibrary("libzip.so.4", package: "libzip4", purpose: "reading a 1PUX export")
        } catch {
            throw .malformed(location: "the archive", reason: "\(error)")
        }
        buffer = .allocate(byteCount: max(archive.count, 1), alignment: 1)
        buffer.copyBytes(from: archive)
        do {
            (zip, entries) = try Self.open(buffer, count: archive.count, library)
        } catch {
            buffer.deallocate()
            throw error
        }
    }

    deinit {
        if let discard = try? library.function("zip_discard", as: Discard.self) { discard(zip) }  // frees the source too
        buffer.deallocate()
    }

    func contains(_ name: String) -> Bool { entries[name] != nil }

    private static func refuse(_ reason: String) -> ImportError { .malformed(location: "the archive", reason: reason) }

    private static func open(_ buffer: UnsafeMutableRawBufferPointer, count: Int, _ library: LoadedLibrary) throws(ImportError) -> (OpaquePointer, [String: zip_uint64_t]) {
        do {
            let createSource = try library.function("zip_source_buffer_create", as: SourceBufferCreate.self)
            let open = try library.function("zip_open_from_source", as: OpenFromSource.self)
            let freeSource = try library.function("zip_source_free", as: SourceFree.self)
            let numberOfEntries = try library.function("zip_get_num_entries", as: NumEntries.self)
            let entryName = try library.function("zip_get_name", as: GetName.self)
            let discard = try library.function("zip_discard", as: Discard.self)
            guard let source = createSource(buffer.baseAddress, zip_uint64_t(count), 0, nil) else { throw refuse("libzip could not read it") }
            guard let zip = open(source, Int32(ZIP_RDONLY), nil) else {
                freeSource(source)
                throw refuse("not a zip archive, or a damaged one")
            }
            let count = numberOfEntries(zip, 0)
            var entries: [String: zip_uint64_t] = [:]
            do {
                guard count >= 0, count <= maximumEntries else { throw refuse("\(count) entries: not an export") }
                for index in 0..<zip_uint64_t(count) {
                    guard let cName = entryName(zip, index, 0) else { throw refuse("an entry without a name") }
                    let path = String(cString: cName)
                    let components = path.split(separator: "/", omittingEmptySubsequences: false)
                    guard !path.hasPrefix("/"), !components.contains(".."), !path.contains("\\") else {
                        throw refuse("an entry path that leaves the archive ('\(path.prefix(80))')")
                    }
                    entries[path] = index
                }
            } catch {
                discard(zip)
                throw error
            }
            return (zip, entries)
        } catch let error as ImportError {
            throw error
        } catch {
            throw .malformed(location: "the archive", reason: "\(error)")
        }
    }

    /// The bytes of the member named `name`, at most `limit` of them.
    func member(_ name: String, limit: Int) throws(ImportError) -> [UInt8] {
        do {
            return try read(name, limit: limit)
        } catch let error as ImportError {
            throw error
        } catch {
            throw .malformed(location: "the archive", reason: "\(error)")
        }
    }

    private func read(_ name: String, limit: Int) throws -> [UInt8] {
        let stat = try library.function("zip_stat_index", as: StatIndex.self)
        let openIndex = try library.function("zip_fopen_index", as: OpenIndex.self)
        let readFile = try library.function("zip_fread", as: Read.self)
        let closeFile = try library.function("zip_fclose", as: Close.self)
        let refuse = Self.refuse
        guard let index = entries[name] else { throw refuse("no \(name) in it") }
        var info = zip_stat_t()
        guard stat(zip, index, 0, &info) == 0 else { throw refuse("cannot stat \(name)") }
        if info.valid & zip_uint64_t(ZIP_STAT_SIZE) != 0, info.size > UInt64(limit) {
            throw refuse("\(name) would inflate to \(info.size) bytes, more than \(limit)")
        }
        guard let file = openIndex(zip, index, 0) else { throw refuse("cannot open \(name) (encrypted, or an unknown compression)") }
        defer { _ = closeFile(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { readFile(file, $0.baseAddress!, zip_uint64_t($0.count)) }
            guard got >= 0 else { throw refuse("\(name) is damaged (a bad checksum or compressed data)") }
            if got == 0 { break }
            bytes += chunk[..<Int(got)]
            guard bytes.count <= limit else { throw refuse("\(name) inflates to more than \(limit) bytes") }
        }
        return bytes
    }
}
