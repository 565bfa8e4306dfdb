import CofferCrypto
import CofferModel

/// An attachment file (SPEC.md §6.7): the preamble, a secretstream header, then the content
/// padded to its bucket and cut into 64 KiB chunks, each a secretstream message, the last one
/// tagged final. No I/O here: the store feeds bytes in and writes what comes out.
///
///     0    8  "COFFER" 'A' 0x01
///     8   24  crypto_secretstream_xchacha20poly1305 header
///     32   …  chunks: 65,536 bytes of plaintext + 17 each; the last holds the rest (1…65,536)
public enum AttachmentStream {
    public static let chunkLength = 65536
    public static let headerLength = FileMagic.length + SecretStream.headerLength
    /// A chunk as written: its plaintext, its tag byte and its MAC.
    public static let sealedChunkLength = chunkLength + SecretStream.overhead
    /// The smallest bucket: every file under 4 KiB looks the same.
    public static let minimumPaddedLength: UInt64 = 4096

    /// The bucket `size` bytes are padded to: Padmé (Nikitin et al., "Reducing Metadata Leakage
    /// from Encrypted Files and Communication with PURBs", 2019) — at most 12% more, and a size
    /// reveals O(log log size) bits — and at least 4 KiB.
    public static func paddedLength(_ size: UInt64) -> UInt64 {
        guard size > minimumPaddedLength else { return minimumPaddedLength }
        let exponent = UInt64(63 - size.leadingZeroBitCount)  // ⌊log2 size⌋
        let bitsOfExponent = UInt64(64 - exponent.leadingZeroBitCount)  // ⌊log2 exponent⌋ + 1
        let mask: UInt64 = (1 << (exponent - bitsOfExponent)) - 1
        return (size + mask) & ~mask
    }

    /// How many chunks a file of content `size` has.
    public static func chunkCount(_ size: UInt64) -> UInt64 {
        (paddedLength(size) + UInt64(chunkLength) - 1) / UInt64(chunkLength)
    }

    /// The file's exact length for content of `size`.
    public static func fileLength(_ size: UInt64) -> UInt64 {
        UInt64(headerLength) + paddedLength(size) + chunkCount(size) * UInt64(SecretStream.overhead)
    }
}

/// Seals content that arrives in pieces of any length into an attachment file's bytes, holding
/// one chunk at a time. It does not hash: the caller computes the content's digest beside it (on
/// another core: BLAKE2b is a third of the work, SPEC.md §6.7).
public final class AttachmentSealer {
    private let stream: SecretStream
    /// Content not yet sealed: a chunk is sealed only once more content (or the end) shows
    /// whether it is the last.
    private var pending: [UInt8] = []
    private var output: [UInt8]
    /// Content bytes taken so far.
    public private(set) var size: UInt64 = 0
    /// The preamble and header: the file's first bytes.
    public let header: [UInt8]

    public init(key: SecureBytes) throws(CryptoError) {
        let (stream, streamHeader) = try SecretStream.pushing(key: key)
        self.stream = stream
        header = FileMagic.bytes(for: .attachment) + streamHeader
        pending.reserveCapacity(AttachmentStream.chunkLength)
        output = [UInt8](repeating: 0, count: AttachmentStream.sealedChunkLength)
    }

    deinit { pending.withUnsafeMutableBytes { Sodium.wipe($0) } }

    /// Takes `content`; `write` receives each sealed chunk (valid only during the call).
    public func append(_ content: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        size += UInt64(content.count)
        var rest = content[...]
        while !rest.isEmpty {
            if pending.count == AttachmentStream.chunkLength { try seal(final: false, write: write) }
            let taken = min(rest.count, AttachmentStream.chunkLength - pending.count)
            pending.append(contentsOf: rest.prefix(taken))
            rest = rest.dropFirst(taken)
        }
    }

    /// Pads the content to its bucket and seals the rest, the last chunk final.
    public func finish(write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var padding = AttachmentStream.paddedLength(size) - size
        while true {
            let room = UInt64(AttachmentStream.chunkLength - pending.count)
            let zeros = min(room, padding)
            pending.append(contentsOf: repeatElement(0, count: Int(zeros)))
            padding -= zeros
            if padding == 0 { break }
            try seal(final: false, write: write)
        }
        try seal(final: true, write: write)
    }

    private func seal(final: Bool, write: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        let length = pending.count + SecretStream.overhead
        pending.withUnsafeBytes { plaintext in
            output.withUnsafeMutableBytes { stream.push(plaintext, final: final, into: $0) }
        }
        pending.withUnsafeMutableBytes { Sodium.wipe($0) }
        pending.removeAll(keepingCapacity: true)
        try output.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }
}

/// Opens an attachment file chunk by chunk against what its record says (key, size, digest):
/// a chunk out of place, missing, repeated, from another file, a file cut short or longer, a
/// padding byte that is not zero or content whose digest differs is refused.
public final class AttachmentOpener {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notAnAttachment
        case chunkRefused(index: UInt64)
        case wrongLength
        case badPadding
        case digestMismatch

        public var description: String {
            switch self {
            case .notAnAttachment: "is not an attachment file of this item (wrong preamble or header)"
            case .chunkRefused(let index): "fails authentication at chunk \(index) (altered, reordered, dropped or from another file)"
            case .wrongLength: "has not the length its item states (cut short, or longer)"
            case .badPadding: "has padding that is not zero"
            case .digestMismatch: "does not hold the content its item's digest names"
            }
        }
    }

    private let stream: SecretStream
    /// `nil` when the caller hashes the content itself (`finish(contentDigest:)`).
    private let hasher: BLAKE2b.Hasher?
    private let attachment: Attachment
    private var plaintext = [UInt8](repeating: 0, count: AttachmentStream.chunkLength)
    /// The next chunk's index, and how many content bytes are still to come.
    public private(set) var nextChunk: UInt64 = 0
    private var contentLeft: UInt64
    public let chunkCount: UInt64

    /// - Parameters:
    ///   - header: the file's first `AttachmentStream.headerLength` bytes.
    ///   - hashing: whether it hashes what it opens; without, the caller hashes the content
    ///     (on another core) and gives the digest to `finish(contentDigest:)`.
    public init(_ attachment: Attachment, header: ArraySlice<UInt8>, hashing: Bool = true) throws(Failure) {
        guard header.count == AttachmentStream.headerLength, Array(header.prefix(FileMagic.length)) == FileMagic.bytes(for: .attachment),
              let key = try? SecureBytes(copying: attachment.key),
              let stream = try? SecretStream.pulling(key: key, header: header.dropFirst(FileMagic.length))
        else { throw .notAnAttachment }
        self.stream = stream
        self.hasher = hashing ? try? BLAKE2b.Hasher() : nil
        self.attachment = attachment
        contentLeft = attachment.size
        chunkCount = AttachmentStream.chunkCount(attachment.size)
    }

    deinit { plaintext.withUnsafeMutableBytes { Sodium.wipe($0) } }

    /// The sealed length of the next chunk; 0 after the last.
    public var nextChunkLength: Int {
        guard nextChunk < chunkCount else { return 0 }
        guard nextChunk == chunkCount - 1 else { return AttachmentStream.sealedChunkLength }
        let padded = AttachmentStream.paddedLength(attachment.size)
        return Int(padded - (chunkCount - 1) * UInt64(AttachmentStream.chunkLength)) + SecretStream.overhead
    }

    /// Opens the next chunk; `deliver` receives its content bytes (none of the padding).
    public func open(_ sealed: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) throws -> Void) throws {
        let count = try open(sealed)
        try plaintext.withUnsafeBytes { buffer in
            let piece = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hasher?.update(piece)
            try deliver(piece)
        }
    }

    /// Opens the next chunk into `output` (at least a chunk long): the count of content bytes
    /// there (none of the padding).
    public func open(_ sealed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = try open(sealed)
        plaintext.withUnsafeBytes { output.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        return count
    }

    /// Pulls the next chunk into `plaintext` and checks its place, tag and padding: the count
    /// of content bytes it holds.
    private func open(_ sealed: UnsafeRawBufferPointer) throws -> Int {
        let index = nextChunk
        guard sealed.count == nextChunkLength, sealed.count > 0 else { throw Failure.wrongLength }
        let count = sealed.count - SecretStream.overhead
        let final: Bool
        do {
            final = try plaintext.withUnsafeMutableBytes { (output) throws(CryptoError) in try stream.pull(sealed, into: output) }
        } catch {
            throw Failure.chunkRefused(index: index)
        }
        guard final == (index == chunkCount - 1) else { throw Failure.chunkRefused(index: index) }
        nextChunk += 1
        let content = Int(min(UInt64(count), contentLeft))
        contentLeft -= UInt64(content)
        guard plaintext[content..<count].allSatisfy({ $0 == 0 }) else { throw Failure.badPadding }
        return content
    }

    /// After the last chunk: whether everything was there and the digest is the item's (the
    /// one this opener computed, or `contentDigest` where the caller hashed).
    public func finish(contentDigest: [UInt8]? = nil) throws(Failure) {
        guard nextChunk == chunkCount, contentLeft == 0 else { throw .wrongLength }
        guard (contentDigest ?? hasher?.finish()) == attachment.digest else { throw .digestMismatch }
    }
}
