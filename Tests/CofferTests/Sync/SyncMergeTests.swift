import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// The merge rules of SPEC.md §15.3, one case each, without git or files.
final class SyncMergeTests: XCTestCase {
    let id = try! RecordID(hex: "0123456789abcdef0123456789abcdef")
    let day = Date(timeIntervalSince1970: 1_800_000_000)

    func version(_ revision: UInt64, password: String = "p", user: String = "u", modified: Date? = nil, tag: String = "") -> RecordVersion {
        let record = Record(
            id: id, serviceIdentifiers: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)], user: user,
            password: password, created: day, modified: modified ?? day.addingTimeInterval(Double(revision)), revision: revision)
        let object = "r\(revision)\(password)\(user)\(tag)"
        return RecordVersion(object: object, bytes: Array(object.utf8), record: record, hash: Array(object.utf8))
    }

    func tombstone(_ revision: UInt64, tag: String = "") -> TombstoneVersion {
        let object = "t\(revision)\(tag)"
        return TombstoneVersion(
            object: object, bytes: Array(object.utf8), tombstone: Tombstone(recordID: id, revision: revision, deleted: day),
            hash: Array(object.utf8))
    }

    func input(base: RecordVersion? = nil, local: RecordVersion? = nil, remote: RecordVersion? = nil,
               localTombstone: TombstoneVersion? = nil, remoteTombstone: TombstoneVersion? = nil, baseTombstone: String? = nil) -> MergeInput {
        var input = MergeInput(id: id)
        (input.base, input.local, input.remote) = (base, local, remote)
        (input.localTombstone, input.remoteTombstone, input.baseTombstone) = (localTombstone, remoteTombstone, baseTombstone)
        return input
    }

    func testRemoteNewsOverAnUnchangedLocalRecord() {
        let base = version(2)
        let decision = SyncMerge.decide(input(base: base, local: base, remote: version(3)))
        XCTAssertEqual(decision, MergeDecision(record: .remote, tombstone: .none))
    }

    func testARemoteRecordOlderThanTheBaseNeverReplacesIt() {
        let base = version(3)
        let decision = SyncMerge.decide(input(base: base, local: base, remote: version(2)))
        XCTAssertEqual(decision.record, .local)
        XCTAssertTrue(decision.remoteStale)
        // The same revision with other bytes is not news either (a rewritten history).
        XCTAssertTrue(SyncMerge.decide(input(base: base, local: base, remote: version(3, password: "other"))).remoteStale)
    }

    func testEditsOnBothSidesAreMergedAndTheSameEditIsNot() {
        let base = version(2)
        XCTAssertEqual(SyncMerge.decide(input(base: base, local: version(3, password: "a"), remote: version(3, password: "b"))).record, .merged)
        let same = version(3, password: "a")
        XCTAssertEqual(SyncMerge.decide(input(base: base, local: same, remote: same)).record, .local)
        // No common base (a first sync): two different versions are both edits.
        XCTAssertEqual(SyncMerge.decide(input(local: version(1, password: "a"), remote: version(1, password: "b"))).record, .merged)
    }

    func testAnEditBeatsADelete() {
        let base = version(3)
        let remoteEdit = SyncMerge.decide(input(base: base, remote: version(4), localTombstone: tombstone(3)))
        XCTAssertEqual(remoteEdit, MergeDecision(record: .remote, tombstone: .none))
        let localEdit = SyncMerge.decide(input(base: base, local: version(4), remote: nil, remoteTombstone: tombstone(3)))
        XCTAssertEqual(localEdit, MergeDecision(record: .local, tombstone: .none))
    }

    func testADeleteWinsOverTheRevisionItDeleted() {
        let base = version(3)
        XCTAssertEqual(SyncMerge.decide(input(base: base, local: base, remoteTombstone: tombstone(3))),
                       MergeDecision(record: .absent, tombstone: .remote))
    }

    func testAnOldCopyOfADeletedRecordStaysOut() {
        let decision = SyncMerge.decide(input(remote: version(3), localTombstone: tombstone(3), baseTombstone: "t3"))
        XCTAssertEqual(decision.record, .absent)
        XCTAssertEqual(decision.tombstone, .local)
        XCTAssertTrue(decision.putBack)
        XCTAssertTrue(decision.remoteStale, "the remote dropped the tombstone")
    }

    func testARecordTheRemoteDroppedWithoutATombstoneIsKept() {
        let base = version(2)
        let decision = SyncMerge.decide(input(base: base, local: base, remote: nil))
        XCTAssertEqual(decision.record, .local)
        XCTAssertTrue(decision.remoteStale)
    }

    func testTwoTombstonesKeepTheHigherRevisionThenTheLargerHash() {
        XCTAssertEqual(SyncMerge.decide(input(localTombstone: tombstone(2), remoteTombstone: tombstone(5))).tombstone, .remote)
        let x = tombstone(4, tag: "x"), y = tombstone(4, tag: "y")
        XCTAssertEqual(SyncMerge.decide(input(localTombstone: x, remoteTombstone: y)).tombstone, .remote)
        XCTAssertEqual(SyncMerge.decide(input(localTombstone: y, remoteTombstone: x)).tombstone, .local)
    }

    func testTheWinnerIsTheSameFromBothSides() {
        let pairs = [(version(4, password: "a"), version(3, password: "b")),
                     (version(3, password: "a", modified: day.addingTimeInterval(9)), version(3, password: "b")),
                     (version(3, password: "a", modified: day), version(3, password: "b", modified: day))]
        for (first, second) in pairs {
            XCTAssertNotEqual(SyncMerge.wins(first, over: second), SyncMerge.wins(second, over: first))
            XCTAssertEqual(SyncMerge.resolve(first, second, now: day).merged, SyncMerge.resolve(second, first, now: day).merged)
        }
    }

    func testAResolvedConflictKeepsEveryPassword() {
        var local = version(3, password: "mine").record
        local.passwordHistory = [PasswordHistoryEntry(password: "old", replaced: day)]
        var remote = version(3, password: "theirs", modified: day.addingTimeInterval(60)).record
        remote.passwordHistory = [PasswordHistoryEntry(password: "old", replaced: day), PasswordHistoryEntry(password: "older", replaced: day.addingTimeInterval(-9))]
        let now = day.addingTimeInterval(120)
        let (merged, copy) = SyncMerge.resolve(
            RecordVersion(object: "l", bytes: [], record: local, hash: [1]), RecordVersion(object: "r", bytes: [], record: remote, hash: [2]), now: now)
        XCTAssertEqual(merged.password, "theirs", "the later modification wins a tie of revisions")
        XCTAssertEqual(merged.revision, 4)
        XCTAssertEqual(merged.passwordHistory.map(\.password), ["mine", "old", "older"])
        XCTAssertNil(copy, "only the password differed")
    }

    func testOtherDifferencesKeepANamedCopy() {
        let (merged, copy) = SyncMerge.resolve(version(3, user: "ann"), version(4, user: "bob"), now: day)
        XCTAssertEqual(merged.user, "bob")
        let kept = SyncMerge.conflictCopy(of: copy!, id: try! RecordID(hex: String(repeating: "ab", count: 16)), now: day)
        XCTAssertEqual(kept.user, "ann")
        XCTAssertEqual(kept.revision, 1)
        XCTAssertEqual(kept.name, "example.com (conflict 2027-01-15)")
        XCTAssertEqual(kept.tags, ["conflict"])
    }

    /// Relying parties' signals reach each device on its own (issue 56): one passkey hidden here
    /// and renamed there is one credential, joined without a conflict copy; a copy a person's
    /// edit makes never carries the merged item's passkey.
    func testOnePasskeyEditedOnBothSidesIsJoinedNeverCopied() throws {
        let passkey = Passkey(credentialID: Array(repeating: 1, count: 16), relyingPartyIdentifier: "example.com", userHandle: [7],
                              userName: "alice", privateKey: [1, 2, 3], created: day)
        var hidden = version(4).record
        hidden.passkey = passkey
        hidden.passkey?.hidden = PasskeyHiding(reason: .unknown, since: day.addingTimeInterval(60))
        hidden.passkey?.signCount = 9
        hidden.passwordReportedUnused = day.addingTimeInterval(30)
        var renamed = version(4, modified: day.addingTimeInterval(500)).record
        renamed.passkey = passkey
        renamed.passkey?.userName = "alice2"
        renamed.passkey?.formerNames = [PasskeyFormerName(userName: "alice", userDisplayName: "", replaced: day.addingTimeInterval(90))]
        renamed.passkey?.signCount = 4
        let (merged, copy) = SyncMerge.resolve(
            RecordVersion(object: "h", bytes: [], record: hidden, hash: [1]), RecordVersion(object: "n", bytes: [], record: renamed, hash: [2]), now: day)
        XCTAssertNil(copy, "signals on both sides are no conflict a person must sort out")
        XCTAssertEqual(merged.passkey?.userName, "alice2", "the winner's names")
        XCTAssertEqual(merged.passkey?.formerNames.map(\.userName), ["alice"])
        XCTAssertEqual(merged.passkey?.signCount, 9, "the higher counter: the relying party never sees it go back")
        XCTAssertEqual(merged.passwordReportedUnused, day.addingTimeInterval(30), "a report, once made, stays")

        // A person's edit on one side: a copy, without the credential the merged item holds.
        var edited = renamed
        edited.user = "someone else"
        let (_, kept) = SyncMerge.resolve(
            RecordVersion(object: "h", bytes: [], record: hidden, hash: [1]), RecordVersion(object: "e", bytes: [], record: edited, hash: [3]), now: day)
        XCTAssertNotNil(kept)
        XCTAssertNil(kept?.passkey, "one credential is one item")
    }

    func testTombstonesAuthenticateAndBindTheirRecord() throws {
        let key = try SecureBytes(copying: [UInt8](repeating: 7, count: 32))
        let vaultID = try VaultID(hex: String(repeating: "11", count: 16))
        let sealed = try Tombstone(recordID: id, revision: 9, deleted: day).sealed(vaultID: vaultID, key: key)
        XCTAssertEqual(sealed.count, Tombstone.fileLength)
        XCTAssertEqual(try Tombstone.open(sealed, id: id, vaultID: vaultID, key: key).revision, 9)
        XCTAssertThrowsError(try Tombstone.open(sealed, id: try RecordID(hex: String(repeating: "22", count: 16)), vaultID: vaultID, key: key))
        var flipped = sealed
        flipped[40] ^= 1
        XCTAssertThrowsError(try Tombstone.open(flipped, id: id, vaultID: vaultID, key: key))
        let header = [UInt8](repeating: 3, count: 144)
        let seal = try HeaderSeal.seal(header: header, vaultID: vaultID, key: key)
        XCTAssertTrue(HeaderSeal.isValid(seal, for: header, vaultID: vaultID, key: key))
        XCTAssertFalse(HeaderSeal.isValid(seal, for: header.map { $0 ^ 1 }, vaultID: vaultID, key: key))
    }
}
