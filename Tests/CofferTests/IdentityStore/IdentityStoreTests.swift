import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

final class IdentityStoreTests: XCTestCase {
    func service(_ text: String) -> CredentialServiceIdentifier { CredentialServiceIdentifier(parsing: text) }

    func users(_ ranked: [RankedIdentity]) -> [String] { ranked.map(\.identity.user) }

    func testVaultChangesKeepTheStoreInStep() throws {
        let vault = try Fixture.vault()
        let store = vault.identityStore
        XCTAssertEqual(store.state, .init(isEnabled: true, supportsIncrementalUpdates: true), "creating a vault enables it here")
        let alice = try vault.add(Fixture.draft("example.com", user: "alice"))
        try vault.add(RecordDraft(
            serviceIdentifiers: [service("https://github.com/login"), service("github.com")], user: "bob", password: "pw"))
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("https://www.example.com/")])), ["alice"])
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("https://github.com/login")])), ["bob"])
        XCTAssertEqual(try store.credentialIdentities(for: []).count, 3, "one identity per service identifier")

        try vault.updateRecord(withID: alice.id) { $0.user = "alice2"; $0.serviceIdentifiers = [self.service("example.org")] }
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), [])
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.org")])), ["alice2"])
        try vault.deleteRecord(withID: alice.id)
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.org")])), [])
    }

    func testSaveRemoveReplaceRemoveAll() throws {
        let vault = try Fixture.vault()
        let store = vault.identityStore
        let a = try vault.add(Fixture.draft("example.com", user: "a"))
        let b = try vault.add(Fixture.draft("example.com", user: "b"))
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), [a.id, b.id].sorted().map { $0 == a.id ? "a" : "b" })

        try store.saveCredentialIdentities([PasswordCredentialIdentity(
            serviceIdentifier: service("example.com"), user: "b", recordIdentifier: b.id.hex, rank: 10)])
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), ["b", "a"], "rank orders")

        try store.removeCredentialIdentities([PasswordCredentialIdentity(
            serviceIdentifier: service("example.com"), user: "b", recordIdentifier: b.id.hex)])
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), ["a"])
        XCTAssertEqual(try vault.record(withID: b.id).user, "b", "removing an identity keeps the record")

        try store.removeAllCredentialIdentities()
        XCTAssertEqual(try store.credentialIdentities(for: []).count, 0)
        XCTAssertEqual(try vault.allRecords().count, 2, "the ledger survives removeAll")

        try store.replaceCredentialIdentities(with: [PasswordCredentialIdentity(
            serviceIdentifier: service("example.com"), user: "a", recordIdentifier: a.id.hex, rank: 1)])
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), ["a"])

        XCTAssertThrows(try store.saveCredentialIdentities([PasswordCredentialIdentity(
            serviceIdentifier: service("x.com"), user: "x", recordIdentifier: String(repeating: "0", count: 32))])
        ) { if case CredentialIdentityStoreError.internalError = $0 { return true }; return false }
        XCTAssertThrows(try store.saveCredentialIdentities([PasswordCredentialIdentity(
            serviceIdentifier: service("x.com"), user: "x", recordIdentifier: "../../etc")])
        ) { if case CredentialIdentityStoreError.internalError = $0 { return true }; return false }
    }

    func testRecentlyFilledRecordsRankFirstAndTheUsageLogStaysBounded() throws {
        let vault = try Fixture.vault()
        let store = vault.identityStore
        let a = try vault.add(Fixture.draft("example.com", user: "a"))
        let b = try vault.add(Fixture.draft("example.com", user: "b"))
        let c = try vault.add(Fixture.draft("example.com", user: "c"))
        let byIdentifier = [a, b, c].sorted { $0.id < $1.id }.map(\.user)
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), byIdentifier)

        vault.deviceState.recordUse(of: b.id, at: 1_000)
        vault.deviceState.recordUse(of: c.id, at: 2_000)
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), ["c", "b", "a"])
        vault.deviceState.recordUse(of: b.id, at: 3_000)
        XCTAssertEqual(users(try store.credentialIdentities(for: [service("example.com")])), ["b", "c", "a"])
        XCTAssertEqual(users(try store.credentialIdentities(for: [])), ["b", "c", "a"], "the whole list too")

        // A clock that went backwards files the use where its time belongs, not first.
        vault.deviceState.recordUse(of: a.id, at: 1_500)
        XCTAssertEqual(vault.deviceState.lastUsed().entries.map(\.time), [3_000, 2_000, 1_500])

        // Only the most recent uses are kept; the oldest fall off the end. The full log is
        // written as SPEC.md §7.6 spells it (id ‖ u64 little-endian seconds, newest first).
        let capacity = DeviceState.usageCapacity
        var full = try (0..<capacity).flatMap { position in
            try RecordID.random().bytes + withUnsafeBytes(of: UInt64(20_000 - position).littleEndian, Array.init)
        }
        full += a.id.bytes + [1, 2, 3]  // a torn trailing entry is ignored
        try Data(full).write(to: URL(fileURLWithPath: vault.deviceState.directory + "/usage"))
        XCTAssertEqual(vault.deviceState.lastUsed().entries.count, capacity)
        vault.deviceState.recordUse(of: c.id, at: 30_000)
        let log = vault.deviceState.lastUsed()
        XCTAssertEqual(log.entries.count, capacity)
        XCTAssertEqual(log.entries.first?.id, c.id)
        XCTAssertEqual(log.entries.last?.time, 20_000 - UInt64(capacity) + 2, "the oldest entry fell off")
        XCTAssertEqual(log.lastUsed(c.id), 30_000)
        XCTAssertEqual(log.lastUsed(b.id), 0, "not in the log any more")
        XCTAssertEqual(log.lastUsed(log.entries[capacity / 2].id), log.entries[capacity / 2].time)
    }

    func testStoreOperationsAreAllOrNothing() throws {
        let faults = FaultInjector(failAt: nil)
        let vault = try Fixture.vault(fileSystem: FileSystem(faults: faults))
        let store = vault.identityStore
        let records = try vault.add((0..<6).map { Fixture.draft("site\($0).example", user: "u\($0)") })
        let replacement = records.prefix(2).map {
            PasswordCredentialIdentity(serviceIdentifier: service("site.example"), user: "new", recordIdentifier: $0.id.hex, rank: 3)
        }
        let before = try store.credentialIdentities(for: []).map(\.identity)
        faults.arm(failAt: nil)
        try Fixture.vault(fileSystem: FileSystem(faults: faults)).identityStore.removeAllCredentialIdentities()
        for step in 1...8 {
            faults.arm(failAt: step)
            XCTAssertThrows(try store.replaceCredentialIdentities(with: replacement)) { _ in true }
            faults.arm(failAt: nil)
            XCTAssertEqual(try store.credentialIdentities(for: []).map(\.identity), before, "step \(step)")
        }
        try store.replaceCredentialIdentities(with: replacement)
        XCTAssertEqual(Set(try store.credentialIdentities(for: []).map(\.identity)), Set(replacement))
    }

    func testListingWhileLockedUsesTheDeviceKeyAndShowsNoPassword() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft("example.com", user: "alice", password: "TopSecret"))
        let locked = try Fixture.open(vault)
        XCTAssertFalse(locked.isUnlocked)
        let found = try locked.identityStore.credentialIdentities(for: [service("example.com")])
        XCTAssertEqual(users(found), ["alice"])
        XCTAssertFalse("\(found)".contains("TopSecret"))
        XCTAssertThrows(try locked.allRecords()) { $0 as? VaultError == .locked }
    }

    func testDisablingRemovesLockedAccessAndEnablingNeedsUnlock() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft())
        let locked = try Fixture.open(vault)
        try locked.identityStore.disable()
        XCTAssertFalse(locked.identityStore.state.isEnabled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: locked.deviceState.directory + "/index-key"))
        XCTAssertThrows(try locked.identityStore.credentialIdentities(for: [service("example.com")])) {
            $0 as? CredentialIdentityStoreError == .storeDisabled
        }
        XCTAssertThrows(try locked.identityStore.enable()) { $0 as? CredentialIdentityStoreError == .storeDisabled }
        try locked.unlock(masterPassword: Fixture.secret())
        XCTAssertFalse(locked.identityStore.state.isEnabled, "an unlock does not silently re-enable a disabled store")
        try locked.identityStore.enable()
        XCTAssertTrue(locked.identityStore.state.isEnabled)
    }

    /// The device's listing snapshot (SPEC.md §7.6) answers only for the manifest it was made
    /// under: a change, a corrupted or an older snapshot all fall back to the shards (and a new
    /// snapshot); it is sealed, and disabling the store removes it.
    func testListingSnapshotIsUsedOnlyForItsOwnManifest() throws {
        let vault = try Fixture.vault()
        let store = vault.identityStore
        try vault.add(Fixture.draft("example.com", user: "alice"))
        let path = vault.deviceState.listingPath
        func listedUsers() throws -> [String] { try store.credentialIdentities(for: []).map(\.identity.user).sorted() }
        func snapshot() -> Data? { FileManager.default.contents(atPath: path) }

        XCTAssertEqual(try listedUsers(), ["alice"])
        let first = try XCTUnwrap(snapshot(), "the first listing saves a snapshot")
        XCTAssertNil(first.range(of: Data("alice".utf8)), "sealed: no name in the file")
        XCTAssertEqual(try listedUsers(), ["alice"])
        XCTAssertEqual(snapshot(), first, "an unchanged index is listed from the snapshot, not rewritten")

        try vault.add(Fixture.draft("example.org", user: "bob"))
        XCTAssertEqual(try listedUsers(), ["alice", "bob"], "a change is seen at once")
        let second = try XCTUnwrap(snapshot())
        XCTAssertNotEqual(second, first)

        try first.write(to: URL(fileURLWithPath: path))  // an older snapshot, e.g. from a backup
        XCTAssertEqual(try listedUsers(), ["alice", "bob"])
        var corrupted = second
        corrupted[corrupted.count / 2] ^= 1
        try corrupted.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try listedUsers(), ["alice", "bob"])
        XCTAssertEqual(try store.identityListing().count, 2)
        var visited: [String] = []
        try store.forEachCredentialIdentity { visited.append($0.user) }
        XCTAssertEqual(visited, try store.credentialIdentities(for: []).map(\.identity.user), "one order for every whole list")

        try store.disable()
        XCTAssertNil(snapshot(), "disabling removes the snapshot with the key")
        XCTAssertTrue(vault.isUnlocked)
        XCTAssertEqual(try store.credentialIdentities(for: []).count, 2, "unlocked, the shards still answer")
        XCTAssertNil(snapshot(), "and nothing is kept on a device that turned the store off")
    }

    /// The listing table (SPEC.md §7.6) keeps the order `coffer list` prints — by service,
    /// user, record id, kind of row — and a listing read from it is the listing read from the
    /// shards, in either order; a snapshot of another version is rebuilt, never read.
    func testListingTableKeepsServiceOrderAndAgreesWithTheShards() throws {
        let vault = try Fixture.vault()
        let store = vault.identityStore
        for (service, user) in [("b.example", "zed"), ("a.example", "yan"), ("b.example", "amy"), ("b.example", "amy"), ("c.example", "")] {
            try vault.add(Fixture.draft(service, user: user))
        }
        try vault.add([RecordDraft(serviceIdentifiers: [], user: "", password: "", name: "Alarm code", kind: .note)])
        let path = vault.deviceState.listingPath
        func rows(_ order: IdentityListing.Order) throws -> [String] {
            let listing = try store.identityListing(order: order)
            return listing.rows.map { "\($0.entry) \(listing.identity($0).serviceIdentifier.identifier) \(listing.identity($0).user) \($0.recordID.hex)" }
        }
        try? FileManager.default.removeItem(atPath: path)
        let fromShards = (service: try rows(.service), suggestion: try rows(.suggestion))
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try rows(.service), fromShards.service, "the table lists exactly what the shards do, in the same order")
        XCTAssertEqual(try rows(.suggestion), fromShards.suggestion)
        XCTAssertEqual(fromShards.service.map { $0.split(separator: " ", omittingEmptySubsequences: false)[1] },
                       ["", "a.example", "b.example", "b.example", "b.example", "c.example"],
                       "by service, the note by its name ('A' sorts before 'a')")
        let amys = fromShards.service.filter { $0.contains(" amy ") }.map { $0.suffix(32) }
        XCTAssertEqual(amys, amys.sorted(), "ties broken by record id")

        for version: UInt8 in [1, 2, 3, 4] {  // older snapshots: refused by their version, rebuilt
            var older = try XCTUnwrap(FileManager.default.contents(atPath: path))
            older[7] = version
            try older.write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(try rows(.service), fromShards.service)
            XCTAssertEqual(FileManager.default.contents(atPath: path)?[7], 5, "replaced by a version-5 snapshot")
        }
    }

    /// A URL login sorts by its host and port, what a listing shows for it, not under "https".
    func testListingSortsURLLoginsByHost() throws {
        let vault = try Fixture.vault()
        for service in ["https://zed.example/login", "m.example", "https://b.example:8443/x?y", "http://c.example#top", "a.example"] {
            try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: service)], user: "u", password: "p"))
        }
        let listing = try vault.identityStore.identityListing(order: .service)
        let shown = listing.withUnsafeText { text in
            listing.rows.map { String(decoding: UnsafeBufferPointer(rebasing: text[IdentityListing.firstColumn(of: $0, in: text)]), as: UTF8.self) }
        }
        XCTAssertEqual(shown, ["a.example", "b.example:8443", "c.example", "m.example", "zed.example"])
        XCTAssertEqual(try vault.identityStore.identityListing(order: .service).rows.map(\.recordID), listing.rows.map(\.recordID), "the snapshot keeps it")
    }

    /// A long-lived host's bucket cache answers from memory only while the manifest names the
    /// shard it kept: a change (by this host or another process) is seen at the next request, a
    /// shard file damaged after it was kept cannot change an answer, and nothing of one vault is
    /// served to another.
    func testBucketCacheServesOnlyTheShardTheManifestNames() throws {
        var configuration = Fixture.configuration()
        configuration.identityBucketCache = IdentityBucketCache()
        let writer = try Fixture.vault()
        let host = try Vault.open(writer.container, configuration: configuration)
        try host.unlock(masterPassword: Fixture.secret())
        try writer.add(Fixture.draft("a.example.com", user: "alice"))
        func users(_ vault: Vault, _ site: String = "example.com") throws -> [String] {
            try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(identifier: site, type: .domain)]).map(\.identity.user).sorted()
        }
        XCTAssertEqual(try users(host), ["alice"])
        for file in Fixture.allFiles(under: writer.container.path + "/index/shards") {  // kept: the files are not read again
            try Data("damaged".utf8).write(to: URL(fileURLWithPath: file))
        }
        XCTAssertEqual(try users(host), ["alice"], "answered from the kept, authenticated payloads")
        try writer.rebuildIdentityIndex()  // every bucket under a new shard id
        try writer.add(Fixture.draft("b.example.com", user: "bob"))
        XCTAssertEqual(try users(host), ["alice", "bob"], "another process's change is seen at once")

        let other = try Vault.create(
            in: GroupContainer(path: Fixture.containerPath()), masterPassword: Fixture.secret(), kdf: KDFPolicy.testingParameters,
            configuration: configuration)
        try other.add(Fixture.draft("c.example.com", user: "carol"))
        XCTAssertEqual(try users(other), ["carol"], "one vault's buckets are never another's")
        XCTAssertEqual(try users(host), ["alice", "bob"])
    }

    func testContainerCopyWithoutDeviceStateRevealsNoNames() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft("uniquesite.example", user: "uniqueuser9"))
        let copy = Fixture.containerPath()
        try FileManager.default.copyItem(atPath: vault.container.path, toPath: copy)
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "/index/manifest"))
        for file in Fixture.allFiles(under: copy) {
            let text = String(decoding: try Fixture.bytes(file), as: UTF8.self)
            XCTAssertFalse(text.contains("uniquesite") || text.contains("uniqueuser9"), file)
        }
        // Without this device's state, the copy cannot even list while locked.
        var configuration = Fixture.configuration()
        configuration.stateDirectory = Fixture.containerPath("other-device")
        let elsewhere = try Vault.open(GroupContainer(path: copy), configuration: configuration)
        XCTAssertThrows(try elsewhere.identityStore.credentialIdentities(for: [service("uniquesite.example")])) {
            $0 as? CredentialIdentityStoreError == .storeDisabled
        }
    }

    func testRestoredCopyRebuildsOnFirstUnlockElsewhere() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft("restored.example", user: "carol"))
        let copy = Fixture.containerPath()
        try FileManager.default.copyItem(atPath: vault.container.path, toPath: copy)
        try FileManager.default.removeItem(atPath: copy + "/index")  // a records-only copy
        var configuration = Fixture.configuration()
        configuration.stateDirectory = Fixture.containerPath("new-device")
        let restored = try Vault.open(GroupContainer(path: copy), configuration: configuration)
        try restored.unlock(masterPassword: Fixture.secret())
        XCTAssertTrue(restored.identityStore.state.isEnabled)
        XCTAssertEqual(users(try restored.identityStore.credentialIdentities(for: [service("restored.example")])), ["carol"])
        XCTAssertEqual(try restored.record(withID: record.id).password, "hunter2")
    }
}

/// Promise 2 across files: deletion, rollback and resurrection of single records are caught by
/// the ledger even though every file on its own is authentic.
final class LedgerTamperTests: XCTestCase {
    func testDeletedRecordFileIsDetected() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        try FileManager.default.removeItem(atPath: vault.container.recordPath(record.id))
        XCTAssertThrows(try vault.record(withID: record.id)) { $0 as? VaultError == .recordNotFound(record.id) }
        XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "example.com")]).count, 1,
                       "the identity remains, so the provider can report credentialIdentityNotFound")
    }

    func testOlderCopyOfARecordIsRefused() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft(password: "old"))
        let path = vault.container.recordPath(record.id)
        let old = try Fixture.bytes(path)
        try vault.updateRecord(withID: record.id) { $0.password = "new" }
        try Fixture.write(old, to: path)
        XCTAssertThrows(try vault.record(withID: record.id)) {
            if case VaultError.corrupt(_, let reason) = $0 { return reason.contains("rolled back") }
            return false
        }
        XCTAssertThrows(try vault.updateRecord(withID: record.id) { $0.password = "x" }) {
            if case VaultError.corrupt = $0 { return true }
            return false
        }
    }

    func testDeletedRecordPutBackIsRefused() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let path = vault.container.recordPath(record.id)
        let bytes = try Fixture.bytes(path)
        try vault.deleteRecord(withID: record.id)
        try Fixture.write(bytes, to: path)
        XCTAssertThrows(try vault.record(withID: record.id)) {
            if case VaultError.corrupt(_, let reason) = $0 { return reason.contains("not in the index") }
            return false
        }
    }

    func testWholeVaultRollbackIsDetectedUntilAccepted() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft(password: "v1"))
        let snapshot = Fixture.containerPath()
        try FileManager.default.copyItem(atPath: vault.container.path, toPath: snapshot)
        try vault.updateRecord(withID: record.id) { $0.password = "v2" }
        try FileManager.default.removeItem(atPath: vault.container.path)
        try FileManager.default.moveItem(atPath: snapshot, toPath: vault.container.path)
        let reopened = try Fixture.reopen(vault)
        XCTAssertThrows(try reopened.record(withID: record.id)) {
            if case VaultError.rolledBack = $0 { return true }
            return false
        }
        XCTAssertThrows(try reopened.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "example.com")])) { _ in true }
        try reopened.acceptRollback()
        XCTAssertEqual(try reopened.record(withID: record.id).password, "v1")
    }

    func testTamperedIndexFilesAreRejected() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft())
        let manifest = vault.container.indexDirectory + "/manifest"
        var bytes = try Fixture.bytes(manifest)
        bytes[bytes.count / 2] ^= 1
        try Fixture.write(bytes, to: manifest)
        XCTAssertThrows(try vault.allRecords()) { if case VaultError.corrupt = $0 { return true }; return false }
    }
}
