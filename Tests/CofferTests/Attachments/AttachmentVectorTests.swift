@testable import CofferFormat
@testable import CofferCrypto
import CofferModel
import CofferSupport
import Foundation
import XCTest

/// The attachment file of SPEC.md §6.7 as the reference implementation wrote it
/// (Tools/reference/generate_vectors.py), read by Coffer's reader — and the same file reordered,
/// cut, grown, or flipped anywhere, refused.
final class AttachmentVectorTests: XCTestCase {
    func member(_ vector: VectorFile) throws -> Attachment {
        let json = try JSONValue.parse(Array(vector.string("member").utf8))
        return try XCTUnwrap(Attachment(json: json))
    }

    func open(_ bytes: [UInt8], _ attachment: Attachment) throws -> [UInt8] {
        var content: [UInt8] = []
        let opener = try AttachmentOpener(attachment, header: bytes.prefix(AttachmentStream.headerLength))
        var offset = AttachmentStream.headerLength
        while opener.nextChunkLength > 0 {
            let length = opener.nextChunkLength
            guard offset + length <= bytes.count else { throw AttachmentOpener.Failure.wrongLength }
            try bytes.withUnsafeBytes { try opener.open(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + length])) { content += $0 } }
            offset += length
        }
        guard offset == bytes.count else { throw AttachmentOpener.Failure.wrongLength }
        try opener.finish()
        return content
    }

    func testTheReferenceFileReadsAndEveryDamageIsRefused() throws {
        let vector = try VectorFile.load("primitives/attachment.vector")
        let attachment = try member(vector)
        let file = vector.hex("file")
        let content = try open(file, attachment)
        XCTAssertEqual(content, (0..<70_000).map { UInt8(($0 * 31 + ($0 >> 8)) % 256) })
        XCTAssertEqual(Hex.encode(try BLAKE2b.hash(content)), vector.string("contentdigest"))
        XCTAssertEqual(attachment.json(omittingDefaults: true).canonicalBytes, Array(vector.string("member").utf8), "the member writes back the same")

        let header = AttachmentStream.headerLength, chunk = AttachmentStream.sealedChunkLength
        let first = Array(file[header..<header + chunk]), second = Array(file[(header + chunk)...])
        let damaged: [(String, [UInt8])] = [
            ("chunks swapped", Array(file[..<header]) + second + first),
            ("last chunk dropped", Array(file[..<(header + chunk)])),
            ("first chunk dropped", Array(file[..<header]) + second),
            ("one byte short", Array(file.dropLast())),
            ("one byte more", file + [0]),
            ("preamble", { var b = file; b[6] ^= 1; return b }()),
            ("stream header", { var b = file; b[20] ^= 1; return b }()),
            ("first chunk", { var b = file; b[header + 100] ^= 1; return b }()),
            ("last byte", { var b = file; b[b.count - 1] ^= 1; return b }()),
        ]
        for (what, bytes) in damaged { XCTAssertThrowsError(try open(bytes, attachment), what) }
        var otherKey = attachment
        otherKey.key[0] ^= 1
        XCTAssertThrowsError(try open(file, otherKey), "a foreign file: another key")
        var otherDigest = attachment
        otherDigest.digest[0] ^= 1
        XCTAssertEqual(try? open(file, otherDigest), nil, "content that is not what the item names")
        var otherSize = attachment
        otherSize.size -= 1
        XCTAssertThrowsError(try open(file, otherSize), "a size the padding does not agree with")
    }

    func testBucketsAreTheReferences() throws {
        let vector = try VectorFile.load("primitives/attachment.vector")
        for pair in vector.string("buckets").split(separator: " ") {
            let parts = pair.split(separator: ":").compactMap { UInt64($0) }
            XCTAssertEqual(AttachmentStream.paddedLength(parts[0]), parts[1], "size \(parts[0])")
        }
    }

    func testTheMemberIsReadStrictly() throws {
        let vector = try VectorFile.load("primitives/attachment.vector")
        let good = try XCTUnwrap(try JSONValue.parse(Array(vector.string("member").utf8)).objectValue)
        let changes: [(String, JSONValue?)] = [
            ("name", .string("a/b")), ("name", .string("")), ("name", .string("..")), ("size", .string("1")), ("digest", .string("00")),
            ("digest", .string(String(repeating: "A", count: 64))), ("key", .string("AAAA")), ("id", .string("xyz")),
            ("mediaType", .string("pdf")), ("added", nil), ("size", nil),
        ]
        for (name, value) in changes {
            var members = good
            members[name] = value
            XCTAssertNil(Attachment(json: .object(members)), "\(name) = \(String(describing: value))")
        }
        var noType = good
        noType["mediaType"] = nil
        XCTAssertEqual(Attachment(json: .object(noType))?.mediaType, "application/octet-stream")
    }
}
