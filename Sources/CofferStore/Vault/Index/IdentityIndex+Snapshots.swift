import CofferFormat

/// A device's derived tables of the identity buckets — the listing snapshot and the completion
/// table (SPEC.md §7.6) — as a header file and one file per chunk, each sealed under the index key:
///
/// ```
/// NAME          = "COFFER" ‖ type ‖ 0x04 ‖ nonce ‖ XChaCha20-Poly1305 of the header, ad = "COFFER" ‖ type ‖ 0x04 ‖ vault id
/// header        = layout u8 ‖ 256 × shard id (16; zeros: no shard)
///                 ‖ u32 LE n ‖ n × (chunk id (16) ‖ u32 LE sealed length ‖ u32 LE count ‖ u16 LE key length ‖ key)
/// NAME-<id hex> = nonce ‖ XChaCha20-Poly1305 of the chunk's part of the table, ad = "COFFER" ‖ type ‖ 0x04 ‖ vault id ‖ chunk id
/// ```
///
/// Why, where version 3 was one message bound to the manifest's digest: a million identities
/// made one 94 MB message that every change threw away, so the first listing after any edit
/// read all 256 buckets and sorted a million rows again (3.5 s, 620 MB). The header names the
/// identity shards the table was made from — a shard is never rewritten, so equal ids mean
/// equal contents — and a reader that finds some of them replaced brings the table up to date
/// from those buckets alone, writing only the chunks that changed and a new header. Chunks open
/// on every core, and a Tab opens only the one its word falls in. A chunk's id is bound into its
/// seal and listed in the authenticated header, and ids are random and never reused, so no
/// chunk of another table or another version can stand in for one.
package struct SnapshotFile: Sendable {
    package struct Chunk: Sendable {
        package let id: [UInt8]
        /// The chunk file's length: `nonce ‖ ciphertext ‖ tag`.
        package let sealedLength: Int
        /// How many rows or lines it holds.
        package let count: Int
        /// Its first line's sort key (the completion table's; empty in a listing).
        package let key: [UInt8]

        package var plaintextLength: Int { sealedLength - SnapshotFile.overhead }
    }

    /// 5: listing rows carry their record's date and tags (index layout 4).
    package static let version: UInt8 = 5
    static let overhead = XChaCha20Poly1305.nonceLength + XChaCha20Poly1305.tagLength

    package let type: FileType
    package let layout: IndexLayout
    /// The identity shards the table was made from, by slot.
    package let shards: [ShardID?]
    package let chunks: [Chunk]

    /// Whether the table was made from exactly the buckets `manifest` names.
    package func isCurrent(for manifest: IndexManifest) -> Bool {
        layout == manifest.layout && shards.elementsEqual(manifest.shards.prefix(IndexManifest.identitySlots))
    }

    /// The identity slots whose shard `manifest` names differently (when the layout is the same).
    package func changedSlots(for manifest: IndexManifest) -> [Int]? {
        guard layout == manifest.layout else { return nil }
        return (0..<IndexManifest.identitySlots).filter { shards[$0] != manifest.shards[$0] }
    }

    /// The name of chunk `id`'s file beside the header file `name`.
    package static func chunkName(_ name: String, id: [UInt8]) -> String { name + "-" + Hex.encode(id) }
}

/// One chunk of a table being written.
package enum SnapshotPart: Sendable {
    /// `table[range]`, holding `count` rows or lines, the first of which sorts as `key`.
    case plain(Range<Int>, count: Int, key: [UInt8])
    /// A chunk of the table being replaced, unchanged: its file is kept as it is.
    case kept(SnapshotFile.Chunk)
}

extension IdentityIndex {
    /// Seals the header of a table made from the buckets of `manifest`, holding `chunks` in order.
    package func sealSnapshotHeader(_ type: FileType, of manifest: IndexManifest, chunks: [SnapshotFile.Chunk]) throws -> [UInt8] {
        var header: [UInt8] = [manifest.layout.rawValue]
        for slot in 0..<IndexManifest.identitySlots {
            header += manifest.shards[slot]?.bytes ?? [UInt8](repeating: 0, count: identifierByteCount)
        }
        header.append(littleEndian: UInt32(chunks.count))
        for chunk in chunks {
            header += chunk.id
            header.append(littleEndian: UInt32(chunk.sealedLength))
            header.append(littleEndian: UInt32(chunk.count))
            header.append(littleEndian: UInt16(chunk.key.count))
            header += chunk.key
        }
        let nonce = try XChaCha20Poly1305.randomNonce()
        let ad = SealedEnvelope.associatedData(type, version: SnapshotFile.version, vaultID: vaultID)
        return FileMagic.bytes(for: type, version: SnapshotFile.version) + nonce
            + (try XChaCha20Poly1305.seal(header, key: keys.sealing, nonce: nonce, associatedData: ad))
    }

    /// Seals one chunk of a table of `type` under a fresh id.
    package func sealSnapshotChunk(_ type: FileType, _ payload: UnsafeRawBufferPointer, count: Int, key: [UInt8]) throws -> (SnapshotFile.Chunk, [UInt8]) {
        let id = try SecureRandom.bytes(identifierByteCount)
        let nonce = try XChaCha20Poly1305.randomNonce()
        let sealed = nonce + (try XChaCha20Poly1305.seal(payload, key: keys.sealing, nonce: nonce, associatedData: chunkAD(type, id)))
        return (SnapshotFile.Chunk(id: id, sealedLength: sealed.count, count: count, key: key), sealed)
    }

    /// Opens chunk `chunk`'s file bytes where they lie.
    /// - Returns: where its plaintext now is in `bytes`.
    package func openSnapshotChunk(_ type: FileType, _ bytes: inout [UInt8], _ chunk: SnapshotFile.Chunk) throws -> Range<Int> {
        guard bytes.count == chunk.sealedLength else { throw FormatError.badLength }
        return try XChaCha20Poly1305.openInPlace(
            &bytes, ciphertextStart: XChaCha20Poly1305.nonceLength, key: keys.sealing, associatedData: chunkAD(type, chunk.id))
    }

    private func chunkAD(_ type: FileType, _ id: [UInt8]) -> [UInt8] {
        SealedEnvelope.associatedData(type, version: SnapshotFile.version, vaultID: vaultID) + id
    }

    /// Opens the header file of a table of `type`.
    /// - Throws: for another type or version, or a header that does not open or parse — all of
    ///   which mean "no table".
    package func openSnapshotHeader(_ bytes: [UInt8], as type: FileType) throws -> SnapshotFile {
        guard try FileMagic.check(bytes, is: type) == SnapshotFile.version, bytes.count >= FileMagic.length + SnapshotFile.overhead else {
            throw FormatError.badLength
        }
        let nonceEnd = FileMagic.length + XChaCha20Poly1305.nonceLength
        let header = try XChaCha20Poly1305.openUnguarded(
            bytes[nonceEnd...], key: keys.sealing, nonce: bytes[FileMagic.length..<nonceEnd],
            associatedData: SealedEnvelope.associatedData(type, version: SnapshotFile.version, vaultID: vaultID))
        var reader = ByteReader(header)
        guard let layout = IndexLayout(rawValue: try reader.integer(UInt8.self)) else { throw FormatError.nonCanonical("snapshot layout") }
        var shards: [ShardID?] = []
        for _ in 0..<IndexManifest.identitySlots {
            let id = ShardID(validatedBytes: try reader.take(identifierByteCount))
            shards.append(id.words == IdentifierWords(high: 0, low: 0) ? nil : id)
        }
        let count = Int(try reader.integer(UInt32.self))
        var chunks: [SnapshotFile.Chunk] = []
        for _ in 0..<count {
            let id = Array(try reader.take(identifierByteCount))
            let length = Int(try reader.integer(UInt32.self))
            let rows = Int(try reader.integer(UInt32.self))
            let key = Array(try reader.lengthPrefixedBytes())
            guard length >= SnapshotFile.overhead else { throw FormatError.badLength }
            chunks.append(SnapshotFile.Chunk(id: id, sealedLength: length, count: rows, key: key))
        }
        guard reader.isAtEnd else { throw FormatError.badLength }
        return SnapshotFile(type: type, layout: layout, shards: shards, chunks: chunks)
    }
}
