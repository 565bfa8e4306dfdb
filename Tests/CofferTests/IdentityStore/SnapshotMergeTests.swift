import Coffer
@testable import CofferFormat
import Foundation
import Glibc
import Synchronization
@testable import CofferProvider
@testable import CofferStore
import XCTest

/// The listing snapshot and the completion table (SPEC.md §7.6) are brought up to date from the
/// buckets a change replaced: after every kind of change they answer exactly what tables built
/// from every shard answer, and they read no other bucket — shown by removing an unchanged
/// bucket's shard file, which a rebuild could not do without.
final class SnapshotMergeTests: XCTestCase {
    var vault: Vault!
    var store: CredentialIdentityStore { vault.identityStore }

    override func setUpWithError() throws {
        vault = try Fixture.vault()
        for index in 0..<40 { try vault.add(Fixture.draft("site\(index).example", user: "user\(index)")) }
        try vault.add([RecordDraft(serviceIdentifiers: [], user: "", password: "", name: "Alarm code", kind: .note)])
    }

    /// What a listing and three Tabs answer now.
    func answers() throws -> [String] {
        let listing = try store.identityListing(order: .service)
        let rows = listing.rows.map {
            "\($0.entry) \(listing.identity($0).serviceIdentifier.identifier) \(listing.identity($0).user) \(listing.name($0)) \(listing.tags($0)) \($0.modified)"
        }
        let tabs = try [(UInt8(0), "site1"), (0, "A"), (1, "site3")].map { section, prefix in
            String(decoding: try store.completionCandidates(section: section, prefix: prefix), as: UTF8.self)
        }
        return rows + tabs
    }

    /// The same, from tables built from every shard (the device's tables removed first).
    func rebuiltAnswers() throws -> [String] {
        for path in [vault.deviceState.listingPath, completionPath] { try? FileManager.default.removeItem(atPath: path) }
        return try answers()
    }

    var completionPath: String { vault.deviceState.listingPath.replacingOccurrences(of: "/listing", with: "/completion") }

    /// The device directory's build lock of `table`, held as another process building it
    /// would hold it (the caller closes the descriptor).
    func holdingBuildLock(of table: DerivedTable) throws -> Int32 {
        let directory = (vault.deviceState.listingPath as NSString).deletingLastPathComponent
        let lock = open(directory + "/" + table.buildLockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(lock, 0)
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        return lock
    }

    /// Runs `change`, then checks that the merged tables answer as rebuilt ones do while a
    /// bucket the change did not touch has no shard file.
    func checkMerged(_ what: String, _ change: () throws -> Void) throws {
        _ = try answers()  // both tables made from the index as it is
        let before = try vault.identityIndex().readManifest()
        try change()
        let after = try vault.identityIndex().readManifest()
        let changed = (0..<IndexManifest.identitySlots).filter { before.shards[$0] != after.shards[$0] }
        XCTAssertFalse(changed.isEmpty, what)
        let untouched = try XCTUnwrap((0..<IndexManifest.identitySlots).first { !changed.contains($0) && after.shards[$0] != nil }, what)
        let shardPath = vault.container.indexDirectory + "/shards/" + after.shards[untouched]!.hex
        let shard = try XCTUnwrap(FileManager.default.contents(atPath: shardPath))
        try FileManager.default.removeItem(atPath: shardPath)
        let merged = try answers()
        try shard.write(to: URL(fileURLWithPath: shardPath))
        XCTAssertEqual(merged, try rebuiltAnswers(), what)
    }

    func testEveryKindOfChangeIsMergedFromItsBucketsAlone() throws {
        let records = try vault.allRecords().sorted { $0.user < $1.user }
        try checkMerged("an add") { try vault.add(Fixture.draft("site100.example", user: "newcomer")) }
        try checkMerged("a rename and a new user") {
            try vault.updateRecord(withID: records[1].id) { $0.name = "Alarm panel"; $0.user = "renamed" }
        }
        try checkMerged("a new service") {
            try vault.updateRecord(withID: records[2].id) { $0.serviceIdentifiers.append(CredentialServiceIdentifier(parsing: "https://site3.example:8443/x")) }
        }
        try checkMerged("a tag, the row's place unchanged") { try vault.updateRecord(withID: records[4].id) { $0.tags = ["work"] } }
        try checkMerged("a delete") { try vault.deleteRecord(withID: records[3].id) }
        try checkMerged("a note") {
            try vault.add([RecordDraft(serviceIdentifiers: [], user: "", password: "", name: "Attic code", kind: .note)])
        }
        XCTAssertEqual(String(decoding: try store.completionCandidates(section: 0, prefix: "A"), as: UTF8.self), "Alarm code\nAlarm panel\nAttic code\n")
    }

    /// After a change to most buckets (an import), `prepareListings()` brings both tables up to
    /// date at once: the next listing and Tabs then answer as rebuilt tables do while no
    /// identity bucket has a shard file left to read. Without it they could not answer at all.
    func testPreparedListingsReadNoBucket() throws {
        _ = try answers()
        let before = try vault.identityIndex().readManifest()
        try vault.add((0..<600).map { Fixture.draft("imported\($0).example", user: "person\($0)") })
        let after = try vault.identityIndex().readManifest()
        let changed = (0..<IndexManifest.identitySlots).filter { before.shards[$0] != after.shards[$0] }
        XCTAssertGreaterThan(changed.count, CredentialIdentityStore.mergedSlotsLimit, "a change a merge does not take")
        try store.prepareListings()
        let shards = vault.container.indexDirectory + "/shards/"
        let saved = try (0..<IndexManifest.identitySlots).compactMap { slot in
            try after.shards[slot].map { id in (shards + id.hex, try Data(contentsOf: URL(fileURLWithPath: shards + id.hex))) }
        }
        for (path, _) in saved { try FileManager.default.removeItem(atPath: path) }
        let prepared = try answers()
        for (path, bytes) in saved { try bytes.write(to: URL(fileURLWithPath: path)) }
        XCTAssertEqual(prepared, try rebuiltAnswers())
        XCTAssertEqual(prepared.filter { $0.contains("person599") }.count, 1)
    }

    /// While the store is disabled here nothing is kept, so nothing is prepared.
    func testNothingIsPreparedWhileTheStoreIsDisabled() throws {
        try store.disable()
        try store.prepareListings()
        XCTAssertNil(FileManager.default.contents(atPath: vault.deviceState.listingPath))
        XCTAssertNil(FileManager.default.contents(atPath: completionPath))
    }

    /// A candidate two rows give stays while one of them is left, and goes with the last.
    func testACandidateStaysWhileAnyRowGivesIt() throws {
        let first = try vault.add(Fixture.draft("shared.example", user: "one"))
        let second = try vault.add(Fixture.draft("shared.example", user: "two"))
        func services() throws -> String { String(decoding: try store.completionCandidates(section: 1, prefix: "shared"), as: UTF8.self) }
        XCTAssertEqual(try services(), "shared.example\n")
        try vault.deleteRecord(withID: first.id)
        XCTAssertEqual(try services(), "shared.example\n")
        try vault.deleteRecord(withID: second.id)
        XCTAssertEqual(try services(), "")
    }

    /// A damaged header or chunk, or a file cut short, is no table: the answer comes from the
    /// shards, and a sound table replaces it.
    func testADamagedTableIsRebuiltNotRead() throws {
        let expected = try answers()
        let directory = (vault.deviceState.listingPath as NSString).deletingLastPathComponent
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { ($0.hasPrefix("listing") || $0.hasPrefix("completion")) && !$0.hasSuffix(".lock") }
        XCTAssertEqual(Set(files.map { $0.prefix(4) }), ["list", "comp"])
        XCTAssertGreaterThanOrEqual(files.count, 4, "a header and a chunk each")
        for file in files {
            let path = directory + "/" + file
            guard let sound = FileManager.default.contents(atPath: path) else { continue }  // replaced by an earlier round
            for damage in [{ (bytes: inout Data) in bytes[bytes.count - 5] ^= 1 }, { $0 = $0.prefix($0.count - 1) }, { $0[40] ^= 1 }] {
                var bytes = sound
                damage(&bytes)
                try bytes.write(to: URL(fileURLWithPath: path))
                XCTAssertEqual(try answers(), expected, file)
                XCTAssertNotEqual(FileManager.default.contents(atPath: path), bytes, "\(file): replaced or removed")
                if FileManager.default.contents(atPath: path) == nil { break }
            }
        }
    }

    /// A listing of several chunks (1 KiB each here; 1 MiB, ~11,000 rows, by default): a change
    /// rewrites the chunks it falls in and keeps the others' files as they are, and the result
    /// is still the listing built from every shard.
    func testOnlyTheChunksAChangeFallsInAreWrittenAgain() throws {
        var configuration = vault.configuration
        configuration.listingChunkLength = 1 << 10
        vault = try Vault.open(vault.container, configuration: configuration)
        try vault.unlock(masterPassword: Fixture.secret(Fixture.password))
        try vault.add((0..<200).map { Fixture.draft("bulk\($0).example", user: "bulk\($0)") })
        _ = try answers()
        let directory = (vault.deviceState.listingPath as NSString).deletingLastPathComponent
        func chunkFiles() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("listing-") }) }
        let before = try chunkFiles()
        XCTAssertGreaterThanOrEqual(before.count, 2)
        let first = try XCTUnwrap(vault.allRecords().first { $0.user == "bulk1" })
        try vault.updateRecord(withID: first.id) { $0.user = "bulk1-renamed" }
        let merged = try answers()
        let after = try chunkFiles()
        XCTAssertEqual(before.subtracting(after).count, 1, "the one chunk the edit reached is written again")
        XCTAssertEqual(after.subtracting(before).count, 1)
        XCTAssertEqual(merged, try rebuiltAnswers())
        try checkMerged("a delete in a large listing") { try vault.deleteRecord(withID: first.id) }
    }

    /// A whole build waits for one another process has under way, then reads the table that one
    /// wrote instead of building it again (SPEC.md §7.6). The test is the other process: it holds
    /// the build lock, and builds while the store's listing waits.
    func testAWholeBuildWaitsForTheOneUnderWayAndReadsItsTable() throws {
        let expected = try rebuiltAnswers()
        for path in [vault.deviceState.listingPath, completionPath] { try FileManager.default.removeItem(atPath: path) }
        let index = try vault.identityIndex()
        let table = DerivedTable(.identityListing, index: index, device: vault.deviceState)
        let lock = try holdingBuildLock(of: table)
        let listed = expectation(description: "the waiting listing returned")
        let rows = Mutex<Int?>(nil)
        let store = self.store
        Thread.detachNewThread {
            let count = try? store.identityListing(order: .service).rows.count
            rows.withLock { $0 = count }
            listed.fulfill()
        }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertNil(rows.withLock { $0 }, "the listing did not wait for the build under way")
        // The other builder writes the table for the same manifest, then lets go.
        let built = try store.builtListing(table, index.readManifest(), usage: vault.deviceState.lastUsed())
        let header = try FileManager.default.attributesOfItem(atPath: vault.deviceState.listingPath)[.systemFileNumber] as? Int
        XCTAssertEqual(flock(lock, LOCK_UN), 0)
        wait(for: [listed], timeout: 30)
        XCTAssertEqual(rows.withLock { $0 }, built.rows.count)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: vault.deviceState.listingPath)[.systemFileNumber] as? Int, header,
                       "the waiting listing read the table built meanwhile, and wrote none of its own")
        XCTAssertEqual(try answers(), expected)

        // A lock that cannot be had (a directory in its place) only costs the saving.
        close(lock)
        let directory = (vault.deviceState.listingPath as NSString).deletingLastPathComponent
        try FileManager.default.removeItem(atPath: directory + "/" + table.buildLockName)
        try FileManager.default.createDirectory(atPath: directory + "/" + table.buildLockName, withIntermediateDirectories: false)
        XCTAssertEqual(try rebuiltAnswers(), expected)
    }

    /// The same for the completion table: a Tab that finds no current table while another
    /// process builds it whole waits, then answers from that table.
    func testAWholeCompletionBuildWaitsForTheOneUnderWay() throws {
        let expected = try rebuiltAnswers()
        try FileManager.default.removeItem(atPath: completionPath)
        let index = try vault.identityIndex()
        let table = DerivedTable(.completionTable, index: index, device: vault.deviceState)
        let lock = try holdingBuildLock(of: table)
        defer { close(lock) }
        let answered = expectation(description: "the waiting Tab answered")
        let candidates = Mutex<String?>(nil)
        let store = self.store
        Thread.detachNewThread {
            let found = try? store.completionCandidates(section: 0, prefix: "site1")
            candidates.withLock { $0 = found.map { String(decoding: $0, as: UTF8.self) } }
            answered.fulfill()
        }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertNil(candidates.withLock { $0 }, "the Tab did not wait for the build under way")
        let manifest = try index.readManifest()
        _ = store.rebuildCompletionTable(table, from: try store.identityListing(order: .service), manifest)
        let header = try FileManager.default.attributesOfItem(atPath: completionPath)[.systemFileNumber] as? Int
        XCTAssertEqual(flock(lock, LOCK_UN), 0)
        wait(for: [answered], timeout: 30)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: completionPath)[.systemFileNumber] as? Int, header,
                       "the waiting Tab read the table built meanwhile, and wrote none of its own")
        XCTAssertEqual(try answers(), expected)
        XCTAssertEqual(candidates.withLock { $0 }, expected[expected.count - 3])
    }

    /// Two readers bringing one table up to date at once (both hold only the shared lock) each
    /// remove only the chunks of the header they read: the other's new chunks stay, so whichever
    /// header is last names chunks that are all there.
    func testConcurrentWritersNeverRemoveEachOthersChunks() throws {
        _ = try answers()
        let index = try vault.identityIndex()
        let manifest = try index.readManifest()
        let table = DerivedTable(.completionTable, index: index, device: vault.deviceState)
        let read = try XCTUnwrap(table.header())
        let first: [UInt8] = Array("first".utf8), second: [UInt8] = Array("second".utf8)
        let line = { (key: [UInt8]) in [1, 0, 0, 0] + [UInt8(key.count + 1), 0, 0] + key }
        try table.write(manifest, table: line(first), parts: [.plain(0..<(first.count + 7), count: 1, key: [0] + first)], replacing: read)
        let afterFirst = try XCTUnwrap(table.header())
        try table.write(manifest, table: line(second), parts: [.plain(0..<(second.count + 7), count: 1, key: [0] + second)], replacing: read)
        let directory = (vault.deviceState.listingPath as NSString).deletingLastPathComponent
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        XCTAssertTrue(files.contains("completion-" + Hex.encode(afterFirst.chunks[0].id)), "the first writer's chunk is left alone")
        XCTAssertTrue(try XCTUnwrap(table.header()).chunks.allSatisfy { files.contains("completion-" + Hex.encode($0.id)) })
        XCTAssertEqual(String(decoding: try store.completionCandidates(section: 0, prefix: "sec"), as: UTF8.self), "second\n")
        XCTAssertFalse(files.contains("completion-" + Hex.encode(read.chunks[0].id)), "the chunk both replaced is gone")
    }

    /// Rows are paired by their whole content, not by the fields their hash reads: two rows of
    /// one record alike in every fixed field and every string's length (no edit through Coffer
    /// makes them: an edit moves `modified`) still differ by their bytes. Rows of unchanged
    /// buckets are never candidates, and a row twice on one side pairs once.
    func testChangesPairRowsByEveryByteOfTheirContent() throws {
        func row(slot: UInt8, id: UInt8, _ identifier: String) -> [UInt8] {
            var bytes: [UInt8] = [slot] + [UInt8](repeating: id, count: 16) + [0, 0, 1, 0] + [UInt8](repeating: 0, count: 8)
            for string in [identifier, "user", ""] { bytes += [UInt8(string.utf8.count), 0] + Array(string.utf8) }
            return bytes + [UInt8](repeating: 0, count: 8) + [0, 0]
        }
        func rows(_ encoded: [[UInt8]]) throws -> (text: [UInt8], rows: [IdentityListing.Row]) {
            let text = encoded.flatMap { $0 }
            return (text, try text.withUnsafeBytes { try IdentityListing.rows(of: $0, in: 0..<text.count, count: encoded.count, usage: UsageLog(entries: [])) })
        }
        let old = try rows([row(slot: 1, id: 7, "https://a.com"), row(slot: 1, id: 7, "https://b.com"), row(slot: 2, id: 8, "https://x.com"),
                            row(slot: 3, id: 9, "https://y.com")])
        let fresh = try rows([row(slot: 1, id: 7, "https://a.com"), row(slot: 1, id: 7, "https://c.com"), row(slot: 1, id: 7, "https://a.com"),
                              row(slot: 3, id: 9, "https://y.com")])
        var changed = [Bool](repeating: false, count: IndexManifest.identitySlots)
        changed[1] = true
        changed[3] = true
        let (leaving, coming) = old.text.withUnsafeBufferPointer { oldText in
            fresh.text.withUnsafeBufferPointer { freshText in
                IdentityListing.changes(from: old.rows, in: oldText, changedSlots: changed, to: fresh.rows, in: freshText)
            }
        }
        XCTAssertEqual(leaving, [1], "b.com left; x.com's bucket did not change")
        XCTAssertEqual(coming, [2, 1], "c.com came, and a.com a second time; in service order")
    }
}
