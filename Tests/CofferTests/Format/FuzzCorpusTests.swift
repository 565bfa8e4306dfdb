import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Every input the fuzzers kept (Fuzz/corpus, and any crash under Fuzz/crashes) runs through the
/// same parsers in the normal test suite: a crash found once stays fixed.
final class FuzzCorpusTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../Fuzz").standardized.path

    func inputs(_ directory: String) -> [[UInt8]] {
        let path = Self.root + "/" + directory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().compactMap { FileManager.default.contents(atPath: path + "/" + $0).map(Array.init) }
    }

    func testCorporaAndCrashesParseWithoutCrashing() throws {
        let headers = inputs("corpus/vault-header"), records = inputs("corpus/record"), index = inputs("corpus/index")
        XCTAssertFalse(headers.isEmpty || records.isEmpty || index.isEmpty, "the fuzz corpora are missing")
        let crashes = inputs("crashes")
        for bytes in headers + crashes {
            if let header = try? VaultHeader.decode(bytes, policy: .relaxedForTesting) { XCTAssertEqual(try header.encoded(), bytes) }
        }
        for bytes in records + crashes {
            if let envelope = try? RecordEnvelope.decode(bytes) { XCTAssertEqual(envelope.encoded(), bytes) }
            if let record = try? RecordCoding.decode(bytes) { XCTAssertEqual(try RecordCoding.decode(RecordCoding.encode(record)), record) }
        }
        for bytes in index + crashes {
            if let manifest = try? IndexManifest.decode(plaintext: bytes, layout: .regions) { XCTAssertEqual(manifest.encodedPlaintext(), bytes) }
            if let entries = try? IndexShardCoding.decodeBucket(bytes) {
                // Decoded buckets re-encode to the same bytes: the scan admits only canonical ones.
                let identities = entries.compactMap { entry in if case .identity(let identity) = entry { identity } else { nil } }
                let encoded = switch bytes.first {
                case 0: IndexShardCoding.encodeLegacy(identities: identities, layout: .sites)
                case 2: IndexShardCoding.encodeLegacy(identities: identities, layout: .regions)
                case 3: IndexShardCoding.encode(entries, layout: .items)
                default: IndexShardCoding.encode(entries, layout: .details)
                }
                XCTAssertEqual(encoded, bytes)
                let framed = [0] + LittleEndian.bytes(UInt32(bytes.count)) + bytes  // slot 0 (SPEC.md §7.6)
                let listed = entries.filter { entry in if case .item(let item) = entry { item.listed } else { true } }
                XCTAssertEqual(try IdentityListing(framedBuckets: framed, usage: UsageLog(entries: [])).count, listed.count)
            }
            if let listing = try? IdentityListing(framedBuckets: bytes, usage: UsageLog(entries: [])) {
                for row in listing.rows { _ = (listing.identity(row), listing.tags(row)) }
            }
            // The derived tables' chunk parsers (SPEC.md §7.6) take any bytes without crashing.
            for count in 1...3 {
                if let rows = try? IdentityListing(snapshot: bytes, plaintexts: [0..<bytes.count], counts: [count], usage: UsageLog(entries: [])) {
                    for row in rows.rows { _ = (rows.identity(row), rows.tags(row)) }
                }
                try? CompletionTable.forEachLine(in: bytes, 0..<bytes.count, count: count) { _, _ in }
            }
            if let ledger = try? IndexShardCoding.decodeLedger(bytes), let first = ledger.first {
                XCTAssertEqual(try IndexShardCoding.ledgerEntry(for: first.recordID, in: bytes)?.recordID, first.recordID)
            }
            _ = try? IndexJournal.decode(bytes)
        }
    }
}
