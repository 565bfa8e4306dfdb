import CofferFormat
import FoundationEssentials

/// Files an item carries (SPEC.md §6.7): each sealed as a stream in a file of its own under a
/// key its record holds, written and read in constant memory.
///
/// A file moves between `incoming/` and `attachments/` only under the container's lock, around
/// the commit of the record that names it, as `incoming/<record id>.<attachment id>`; whatever a
/// crash leaves there is settled by the next write (`settleIncomingAttachments`): it belongs in
/// `attachments/` exactly when its record names it. So an interrupted `attach`, `attachment rm`
/// or item deletion leaves the vault as it was before or after, never in between.
extension Vault {
    /// The largest attachment taken unless a caller raises it (Bitwarden's limit per file).
    public static let defaultAttachmentLimit: UInt64 = 100 << 20

    /// Adds a file to item `id`, its bytes read from `read` (which fills the buffer it is given
    /// and returns the count, 0 at the end) and sealed as they come.
    /// - Throws: `VaultError.invalidInput` for a name that may not name a file or is taken, a
    ///   file past `limit` or an item with 100 already; `.locked`; what `read` throws.
    @discardableResult
    public func attach(
        name: String, mediaType: String = Attachment.defaultMediaType, to id: RecordID, limit: UInt64 = Vault.defaultAttachmentLimit,
        read: (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws -> Attachment {
        let keys = try keys()
        guard Attachment.isValidName(name) else {
            throw VaultError.invalidInput("an attachment's name is 1 to 255 bytes without '/' or control characters")
        }
        guard Attachment.isValidMediaType(mediaType) else { throw VaultError.invalidInput("'\(mediaType)' is not a media type (type/subtype)") }
        let record = try self.record(withID: id)
        try Self.checkRoom(for: name, in: record)
        let attachmentID = try mappingErrors(file: "attachment id") { try AttachmentID.random() }
        let key = try SecureBytes.random(count: SecretStream.keyLength)
        let sealer = try AttachmentSealer(key: key)
        let hasher = try BLAKE2b.Hasher()
        let file = try receive(attachmentID, of: id) { file in
            try sealer.header.withUnsafeBytes { try file.write($0) }
            // Read a batch, then hash it on one core while the other seals and writes it.
            var batch = [UInt8](repeating: 0, count: Self.batchChunks * AttachmentStream.chunkLength)
            defer { batch.withUnsafeMutableBytes { Sodium.wipe($0) } }
            var ended = false
            while !ended {
                var filled = 0
                while filled < batch.count {
                    let count = try batch.withUnsafeMutableBytes { try read(UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
                    if count == 0 {
                        ended = true
                        break
                    }
                    filled += count
                    guard sealer.size + UInt64(filled) <= limit else {
                        throw VaultError.invalidInput("'\(name)' is larger than the limit of \(Attachment.describe(size: limit)) per attachment")
                    }
                }
                try batch.withUnsafeBytes { buffer in
                    let content = UnsafeRawBufferPointer(rebasing: buffer[..<filled])
                    try concurrently({ hasher.update(content) }, { try sealer.append(content) { try file.write($0) } })
                }
            }
            try sealer.finish { try file.write($0) }
        }
        let digest = hasher.finish()
        let attachment = Attachment(
            id: attachmentID, name: name, mediaType: mediaType, size: sealer.size, digest: digest, key: key.withUnsafeBytes { Array($0) },
            added: RecordCoding.wholeSeconds(Date()))
        try commit([(file, attachment)], to: id, keys: keys)
        return attachment
    }

    /// Copies `attachments` of an item of `source` (a vault of this person's: their own, or a
    /// team's) to item `id` here, file for file — the sealed bytes as they are, under the key
    /// they came with (`coffer move`). A name item `id` already has is refused.
    public func copyAttachments(_ attachments: [Attachment], from source: Vault, to id: RecordID) throws {
        guard !attachments.isEmpty else { return }
        let keys = try keys()
        let sourceContainer = try source.openContainer()
        var received: [(StreamedFile, Attachment)] = []
        for attachment in attachments {
            var copy = attachment
            copy.id = try mappingErrors(file: "attachment id") { try AttachmentID.random() }
            let file = try receive(copy.id, of: id) { file in
                guard let input = try source.fileSystem.openForReading(attachment.id.hex, in: sourceContainer.shard(of: attachment.id)) else {
                    throw VaultError.corrupt(file: source.container.attachmentPath(attachment.id), reason: "is missing")
                }
                var buffer = [UInt8](repeating: 0, count: AttachmentStream.sealedChunkLength)
                var offset = 0
                while offset < input.size {
                    let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0, at: offset) }
                    if count == 0 { break }
                    try buffer.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                    offset += count
                }
            }
            received.append((file, copy))
        }
        try commit(received, to: id, keys: keys)
    }

    /// A new file in `incoming/` for attachment `attachmentID` of item `id`, locked while `fill`
    /// writes it (the caller may write more after): a writer that dies leaves it to be removed.
    private func receive(_ attachmentID: AttachmentID, of id: RecordID, _ fill: (StreamedFile) throws -> Void) throws -> StreamedFile {
        let opened = try openContainer()
        let incoming = try mappingErrors(file: container.path) { try opened.directory(GroupContainer.incomingName, create: true) }
        let file = try mappingErrors(file: container.path) {
            let file = try fileSystem.createStreamedFile(in: incoming, named: Self.incomingName(id, attachmentID) + ".partial")
            try file.lock()
            return file
        }
        try mappingErrors(file: container.path + "/" + GroupContainer.incomingName) { try fill(file) }
        return file
    }

    /// Under the container's lock: each received file named in passage, the record naming them
    /// committed, then the files moved into `attachments/` (SPEC.md §6.7).
    private func commit(_ received: [(StreamedFile, Attachment)], to id: RecordID, keys: VaultKeys) throws {
        try mappingErrors(file: container.path + "/" + GroupContainer.incomingName) { for (file, _) in received { try file.finish() } }
        try writeTransaction { opened in
            for (file, attachment) in received { try file.rename(to: Self.incomingName(id, attachment.id)) }
            _ = try updateRecord(withID: id, in: opened, keys: keys) { record in
                for (_, attachment) in received {
                    try Self.checkRoom(for: attachment.name, in: record)
                    record.attachments.append(attachment)
                }
            }
            for (_, attachment) in received { try moveIncoming(Self.incomingName(id, attachment.id), into: attachment.id, in: opened) }
        }
    }

    /// Streams the content of item `id`'s attachment `name` to `write`, chunk by chunk, each
    /// authenticated before it is given out; the end checks that nothing was cut or changed.
    /// - Throws: `.attachmentNotFound`; `.corrupt` naming the item and the file when anything
    ///   differs from what its record states (SPEC.md §6.7).
    public func readAttachment(named name: String, of id: RecordID, write: (UnsafeRawBufferPointer) throws -> Void) throws {
        let record = try self.record(withID: id)
        guard let attachment = record.attachment(named: name) else { throw VaultError.attachmentNotFound(item: record.title, name: name) }
        try readAttachment(attachment, of: record, write: write)
    }

    /// `readAttachment(named:of:write:)` for an attachment of a record already read (`verify`).
    public func readAttachment(_ attachment: Attachment, of record: Record, write: (UnsafeRawBufferPointer) throws -> Void) throws {
        let path = container.attachmentPath(attachment.id)
        func corrupt(_ reason: String) -> VaultError {
            .corrupt(file: path, reason: "the attachment '\(attachment.name)' of '\(record.title)' \(reason)")
        }
        let opened = try openContainer()
        let file = try mappingErrors(file: path) { () throws -> OpenedFile? in
            do {
                if let file = try fileSystem.openForReading(attachment.id.hex, in: opened.shard(of: attachment.id)) { return file }
            } catch let error as StorageError where error.isNotFound {}
            // Still in passage: its record was committed, and the move a crash (or a full disk)
            // stopped is the next write's (SPEC.md §6.7).
            guard let incoming = try opened.directoryIfPresent(GroupContainer.incomingName) else { return nil }
            return try fileSystem.openForReading(Self.incomingName(record.id, attachment.id), in: incoming)
        }
        guard let file else { throw corrupt("is missing") }
        guard UInt64(file.size) == AttachmentStream.fileLength(attachment.size) else { throw corrupt(AttachmentOpener.Failure.wrongLength.description) }
        do {
            let opener = try AttachmentOpener(attachment, header: (file.read(at: 0, count: AttachmentStream.headerLength) ?? [])[...], hashing: false)
            let hasher = try BLAKE2b.Hasher()
            let batchBytes = Self.batchChunks * AttachmentStream.chunkLength
            // Two content buffers and one of sealed bytes, raw: one core opens batch k + 1 into
            // one buffer while the other hashes and hands out batch k from the other.
            let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.batchChunks * AttachmentStream.sealedChunkLength, alignment: 16)
            let buffers = [UnsafeMutableRawBufferPointer.allocate(byteCount: batchBytes, alignment: 16),
                           UnsafeMutableRawBufferPointer.allocate(byteCount: batchBytes, alignment: 16)]
            defer {
                sealed.deallocate()
                for buffer in buffers {
                    Sodium.wipe(buffer)
                    buffer.deallocate()
                }
            }
            let padded = AttachmentStream.paddedLength(attachment.size)
            var offset = AttachmentStream.headerLength
            /// Reads and opens the next batch of chunks into `output`, every one authenticated
            /// before any is handed out: the count of content bytes it holds.
            func openBatch(into output: UnsafeMutableRawBufferPointer) throws -> Int {
                let first = opener.nextChunk, count = min(UInt64(Self.batchChunks), opener.chunkCount - first)
                guard count > 0 else { return 0 }
                // Every chunk is full but the last.
                let plain = min(UInt64(count) * UInt64(AttachmentStream.chunkLength), padded - first * UInt64(AttachmentStream.chunkLength))
                let span = Int(plain) + Int(count) * SecretStream.overhead
                guard try file.read(into: UnsafeMutableRawBufferPointer(rebasing: sealed[..<span]), at: offset) == span else {
                    throw AttachmentOpener.Failure.wrongLength
                }
                var taken = 0, produced = 0
                while taken < span {
                    let length = opener.nextChunkLength
                    produced += try opener.open(
                        UnsafeRawBufferPointer(rebasing: sealed[taken..<taken + length]), into: UnsafeMutableRawBufferPointer(rebasing: output[produced...]))
                    taken += length
                }
                offset += span
                return produced
            }
            var slot = 0
            var ready = try openBatch(into: buffers[0])
            var more = opener.nextChunkLength > 0
            while true {
                let piece = UnsafeRawBufferPointer(rebasing: buffers[slot][..<ready])
                var next = 0
                let target = buffers[1 - slot]
                try concurrently({ hasher.update(piece) }, {
                    try write(piece)
                    if more { next = try openBatch(into: target) }
                })
                guard more else { break }
                more = opener.nextChunkLength > 0
                ready = next
                slot = 1 - slot
            }
            try opener.finish(contentDigest: hasher.finish())
        } catch let failure as AttachmentOpener.Failure {
            throw corrupt(failure.description)
        } catch let failure as StorageError {
            throw VaultError.storage(failure)
        }
    }

    /// Removes item `id`'s attachment `name`: the record first, then its file.
    public func removeAttachment(named name: String, of id: RecordID) throws {
        let keys = try keys()
        try writeTransaction { opened in
            let index = try identityIndex(opened)
            let record = try checkedRecord(id, ledger: index.ledgerEntry(for: id, in: index.readManifest()), keys: keys, in: opened)
            guard let attachment = record.attachment(named: name) else { throw VaultError.attachmentNotFound(item: record.title, name: name) }
            try moveAside(attachment.id, of: id, in: opened)
            _ = try updateRecord(withID: id, in: opened, keys: keys) { $0.attachments.removeAll { $0.id == attachment.id } }
            try fileSystem.removeFile(Self.incomingName(id, attachment.id), in: opened.directory(GroupContainer.incomingName))
        }
    }

    /// Checks a whole attachment file held in memory against its record's member.
    /// - Throws: `AttachmentOpener.Failure`.
    static func checkAttachment(_ bytes: [UInt8], _ attachment: Attachment) throws {
        let checker = AttachmentChecker(attachment)
        try bytes.withUnsafeBytes { try checker.append($0) }
        try checker.finish()
    }

    // MARK: Internals

    /// Chunks read, sealed or opened at once (4 MiB): large enough that hashing beside the
    /// sealing pays, small enough for constant memory.
    static let batchChunks = 64

    /// `incoming/<record id>.<attachment id>`: a file in passage, whose record says where it belongs.
    static func incomingName(_ record: RecordID, _ attachment: AttachmentID) -> String { record.hex + "." + attachment.hex }

    static func checkRoom(for name: String, in record: Record) throws(VaultError) {
        guard record.attachment(named: name) == nil else {
            throw .invalidInput("'\(record.title)' already has an attachment named '\(name)' ('coffer attachment rm' it first, or --name another)")
        }
        guard record.attachments.count < Attachment.maximumPerItem else { throw .invalidInput("an item carries at most \(Attachment.maximumPerItem) attachments") }
    }

    /// `attachments/<xx>/<id>` moved to `incoming/` (before the record that names it goes).
    func moveAside(_ attachment: AttachmentID, of record: RecordID, in opened: OpenContainer) throws {
        let incoming = try opened.directory(GroupContainer.incomingName, create: true)
        do {
            try fileSystem.rename(attachment.hex, in: opened.shard(of: attachment), to: Self.incomingName(record, attachment), in: incoming)
        } catch where error.isNotFound {}  // already gone: the record is what matters
    }

    /// `incoming/NAME` moved to `attachments/<xx>/<id>` (after the record that names it was committed).
    func moveIncoming(_ name: String, into attachment: AttachmentID, in opened: OpenContainer) throws {
        try fileSystem.rename(name, in: opened.directory(GroupContainer.incomingName), to: attachment.hex, in: opened.shard(of: attachment, create: true))
    }

    /// Settles what a crash left in `incoming/` (under the container's lock; needs the keys): a
    /// partial file whose writer is gone is removed; a file in passage goes to `attachments/` if
    /// its record names it, else it is removed.
    func settleIncomingAttachments(in opened: OpenContainer) throws {
        guard let keys = try? keys(), let incoming = try opened.directoryIfPresent(GroupContainer.incomingName) else { return }
        for name in try fileSystem.contents(of: incoming) {
            if name.hasSuffix(".partial") {
                // A writer holds its partial file locked while it lives.
                _ = try FileLock(name, in: incoming, fileSystem: fileSystem).withLockIfAvailable { fileSystem.removeQuietly(name, in: incoming) }
                continue
            }
            let parts = name.split(separator: ".")
            guard parts.count == 2, let recordID = try? RecordID(hex: String(parts[0])), let attachmentID = try? AttachmentID(hex: String(parts[1])) else {
                fileSystem.removeQuietly(name, in: incoming)
                continue
            }
            let index = try identityIndex(opened)
            let record = try? checkedRecord(recordID, ledger: index.ledgerEntry(for: recordID, in: index.readManifest()), keys: keys, in: opened)
            if record?.attachments.contains(where: { $0.id == attachmentID }) == true {
                try moveIncoming(name, into: attachmentID, in: opened)
            } else {
                try fileSystem.removeFile(name, in: incoming)
            }
        }
    }
}
