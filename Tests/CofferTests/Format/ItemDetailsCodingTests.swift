@testable import CofferFormat
@testable import CofferModel
import XCTest

/// Layout 4's details (SPEC.md §7.3): every identity and item entry ends with its record's
/// `modified` and tags. They round-trip byte for byte; a reader refuses a tag list that is not
/// exactly what a writer makes, and a bucket of the other layout's kind.
final class ItemDetailsCodingTests: XCTestCase {
    let id = try! RecordID(hex: "00112233445566778899aabbccddeeff")
    let details = ItemDetails(modified: 1_770_091_506, tags: ["work", "favorite"])

    var entries: [BucketEntry] {
        let service = CredentialServiceIdentifier(identifier: "example.org", type: .domain)
        return [
            .identity(IdentityEntry(recordID: id, serviceIdentifier: service, user: "zoë", key: ServiceKey(parsing: service), details: details)),
            .item(ItemEntry(recordID: id, kind: .login, listed: false, name: "Example", user: "zoë", service: "example.org", details: details)),
        ]
    }

    func testDetailsRoundTripAndLayout3LeavesThemOut() throws {
        let bucket = IndexShardCoding.encode(entries, layout: .details)
        XCTAssertEqual(bucket.first, 4, "payload kind 4")
        let tail: [UInt8] = LittleEndian.bytes(Int64(1_770_091_506)) + [2, 4, 0] + Array("work".utf8) + [8, 0] + Array("favorite".utf8)
        XCTAssertEqual(Array(bucket.suffix(tail.count)), tail, "the item entry ends `modified i64 ‖ count u8 ‖ tags`")
        XCTAssertEqual(try IndexShardCoding.decodeBucket(bucket, layout: .details), entries)
        let older = IndexShardCoding.encode(entries, layout: .items)
        XCTAssertEqual(older.first, 3)
        XCTAssertEqual(try IndexShardCoding.decodeBucket(older, layout: .items), entries.map(\.withoutDetails))
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(bucket, layout: .items), "a kind-4 bucket under a layout-3 manifest")
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(older, layout: .details), "a kind-3 bucket under a layout-4 manifest")
    }

    func testAWriterFilesTheFirst255TagsOfAtMost255Bytes() {
        let long = String(repeating: "x", count: 256)
        XCTAssertEqual(ItemDetails(tags: ["a", long, "b"]).tags, ["a", "b"])
        XCTAssertEqual(ItemDetails(tags: (0..<300).map { "t\($0)" }).tags.count, 255)
        XCTAssertEqual(ItemDetails(tags: (0..<300).map { "t\($0)" }).tags.last, "t254")
    }

    func testAMalformedTagListIsRefused() throws {
        let bucket = IndexShardCoding.encode([entries[1]], layout: .details)
        let countAt = bucket.count - (1 + 2 + 4 + 2 + 8)
        XCTAssertEqual(bucket[countAt], 2)
        var more = bucket
        more[countAt] = 3
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(more, layout: .details), "a count beyond the list")
        var fewer = bucket
        fewer[countAt] = 1
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(fewer, layout: .details), "bytes left after the last entry")
        var invalid = bucket
        invalid[bucket.count - 1] = 0xFF
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(invalid, layout: .details), "a tag that is not UTF-8")
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(Array(bucket.dropLast(10 + 8 + 1)), layout: .details), "no details at all")
        // A tag longer than a writer files: built by hand, since the writer cannot make it.
        var oversized = Array(bucket[..<countAt]) + [1]
        oversized.append(littleEndian: UInt16(256))
        oversized += Array(repeating: 0x61, count: 256)
        XCTAssertThrowsError(try IndexShardCoding.decodeBucket(oversized, layout: .details), "a tag over 255 bytes")
    }

    func testTheJournalCarriesTheItemsDetails() throws {
        guard case .item(let item) = entries[1] else { return XCTFail() }
        let json = item.journalJSON
        XCTAssertEqual(json.objectValue?["modified"], .integer(1_770_091_506))
        XCTAssertEqual(json.objectValue?["tags"], ["work", "favorite"])
        XCTAssertEqual(ItemEntry(journalJSON: json, recordID: id), item)
        var bare = item
        bare.details = .none
        XCTAssertNil(bare.journalJSON.objectValue?["tags"], "omitted when empty, as a journal of layout 3 has it")
        XCTAssertEqual(ItemEntry(journalJSON: bare.journalJSON, recordID: id), bare)
    }
}
