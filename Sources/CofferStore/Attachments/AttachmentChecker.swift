import CofferFormat
import CofferModel

/// Checks an attachment file that arrives in pieces of any size (a sync's fetch, streamed from
/// git): the header, then each sealed chunk as soon as it is whole, against the record's member;
/// `finish` once all came. Holds at most one chunk.
final class AttachmentChecker {
    private let attachment: Attachment
    private let fileLength: UInt64
    private var opener: AttachmentOpener?
    private var pending: [UInt8] = []
    private var received: UInt64 = 0

    init(_ attachment: Attachment) {
        self.attachment = attachment
        fileLength = AttachmentStream.fileLength(attachment.size)
    }

    /// - Throws: `AttachmentOpener.Failure`.
    func append(_ piece: UnsafeRawBufferPointer) throws {
        received += UInt64(piece.count)
        guard received <= fileLength else { throw AttachmentOpener.Failure.wrongLength }
        var rest = piece[...]
        while !rest.isEmpty {
            let wanted = opener?.nextChunkLength ?? AttachmentStream.headerLength
            guard wanted > 0 else { throw AttachmentOpener.Failure.wrongLength }
            let taken = rest.prefix(wanted - pending.count)
            pending += taken
            rest = rest.dropFirst(taken.count)
            guard pending.count == wanted else { continue }
            if let opener {
                try pending.withUnsafeBytes { try opener.open($0) { _ in } }
            } else {
                opener = try AttachmentOpener(attachment, header: pending[...])
            }
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// Whether every byte came and the content is the item's.
    func finish() throws {
        guard let opener, pending.isEmpty, received == fileLength else { throw AttachmentOpener.Failure.wrongLength }
        try opener.finish()
    }
}
