import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// The reference implementation's sync files and merge decisions (SPEC.md §15, §18): Swift
/// reproduces the bytes and decides all 2,688 combinations of states the same way.
final class SyncVectorTests: XCTestCase {
    func testTombstoneAndHeaderSealMatchTheReference() throws {
        let vector = try VectorFile.load("sync/sync.vector")
        let vaultID = try VaultID(hex: vector.string("vault_id"))
        let keys = try VaultKeys(vaultKey: SecureBytes(copying: vector.hex("vault_key")))
        let id = try RecordID(hex: vector.string("record_id"))
        let tombstone = Tombstone(
            recordID: id, revision: UInt64(vector.string("tombstone_revision"))!,
            deleted: Date(timeIntervalSince1970: Double(vector.string("tombstone_deleted"))!))
        XCTAssertEqual(try tombstone.sealed(vaultID: vaultID, key: keys.recordKey, nonce: vector.hex("tombstone_nonce")), vector.hex("tombstone_file"))
        XCTAssertEqual(try Tombstone.open(vector.hex("tombstone_file"), id: id, vaultID: vaultID, key: keys.recordKey), tombstone)
        XCTAssertEqual(
            try HeaderSeal.seal(header: vector.hex("header"), vaultID: vaultID, key: keys.recordKey, nonce: vector.hex("seal_nonce")),
            vector.hex("seal_file"))
        XCTAssertTrue(HeaderSeal.isValid(vector.hex("seal_file"), for: vector.hex("header"), vaultID: vaultID, key: keys.recordKey))
    }

    func testEveryMergeDecisionMatchesTheReference() throws {
        let vector = try VectorFile.load("sync/merge.vector")
        let id = try RecordID(hex: String(repeating: "0a", count: 16))
        func version(_ text: Substring) throws -> RecordVersion? {
            guard text != "-" else { return nil }
            let parts = text.split(separator: ":")
            // The content (5th part, default the object) is the document apart from its revision.
            let record = Record(
                id: id, serviceIdentifiers: [], user: "", password: "", notes: String(parts.count > 4 ? parts[4] : parts[1]),
                created: Date(timeIntervalSince1970: 0), modified: Date(timeIntervalSince1970: Double(parts[2])!), revision: UInt64(parts[0])!)
            return RecordVersion(object: String(parts[1]), bytes: [], record: record, hash: try XCTUnwrap(Hex.decode(String(parts[3]))))
        }
        func tombstone(_ text: Substring) throws -> TombstoneVersion? {
            guard text != "-" else { return nil }
            let parts = text.split(separator: ":")
            return TombstoneVersion(
                object: String(parts[1]), bytes: [], tombstone: Tombstone(recordID: id, revision: UInt64(parts[0])!, deleted: Date()),
                hash: try XCTUnwrap(Hex.decode(String(parts[2]))))
        }
        var checked = 0
        for index in 0... {
            let line = vector.string("case\(index)")
            guard !line.isEmpty else { break }
            let halves = line.components(separatedBy: " => ")
            let states = halves[0].split(separator: " "), expected = halves[1].split(separator: " ")
            var input = MergeInput(id: id)
            input.base = try version(states[0])
            input.local = try version(states[1])
            input.remote = try version(states[2])
            input.localTombstone = try tombstone(states[3])
            input.remoteTombstone = try tombstone(states[4])
            input.baseTombstone = states[5] == "-" ? nil : String(states[5])
            let decision = SyncMerge.decide(input)
            let record: String = switch decision.record {
            case .local: "local"
            case .localRaised(let revision): "local:\(revision)"
            case .remote: "remote"
            case .merged: "merged"
            case .absent: "absent"
            }
            let kept: String = switch decision.tombstone {
            case .none: "none"
            case .local: "local"
            case .remote: "remote"
            case .raised(let revision): "raised:\(revision)"
            }
            XCTAssertEqual([record, kept, decision.remoteStale ? "1" : "0", decision.putBack ? "1" : "0"], expected.map(String.init), "case\(index): \(line)")
            checked += 1
        }
        XCTAssertEqual(checked, 2688)
        for index in 0..<3 {
            let parts = vector.string("winner\(index)").components(separatedBy: " => ")
            let pair = parts[0].split(separator: " ")
            let (a, b) = (try XCTUnwrap(version(pair[0])), try XCTUnwrap(version(pair[1])))
            XCTAssertEqual(SyncMerge.wins(a, over: b) ? a.object : b.object, parts[1], "winner\(index)")
        }
    }
}
