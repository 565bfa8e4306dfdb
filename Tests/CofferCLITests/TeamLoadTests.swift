import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferTeams
@testable import CofferFormat
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// What a team's real load found (issue 50), each reproduced with three people and a local bare
/// remote, deterministically: nothing deleted comes back, nothing edited is lost, a removed
/// member's old key opens nothing written after her removal anywhere in the remote's history,
/// and a reader that meets a rotation never calls it tampering.
final class TeamLoadTests: TeamTestCase {
    /// Defect 1: a removal re-seals the tombstones too, so that a new member can join and a
    /// member who missed the deletion can still sync, and every member's verify passes.
    func testTombstonesFromBeforeARemovalOpenForANewMemberAndALateOne() throws {
        let (alice, bob, carol) = founded()
        let erin = TeamPerson("erin", root: root)
        alice.must(["team", "add", "ops", erin.recipient, "--as", "erin"])
        erin.must(["team", "join", remote, "--founder", alice.fingerprint])
        bob.must(["add", "--team", "ops", "gone.example", "bob"], stdin: "pw\n")
        bob.must(["team", "sync"])
        bob.must(["rm", "ops:gone.example", "--force"])
        bob.must(["team", "sync"])  // the tombstone, under the key Carol holds
        alice.must(["team", "sync"])
        alice.must(["team", "remove", "ops", "carol"])

        let dave = TeamPerson("dave", root: root)
        alice.must(["team", "add", "ops", dave.recipient, "--as", "dave"])
        let joined = dave.run(["team", "join", remote, "--founder", alice.fingerprint])
        XCTAssertEqual(joined.code, 0, "a new member joins after a removal: \(joined.stderr)")
        let late = erin.run(["team", "sync"])
        XCTAssertEqual(late.code, 0, "a member who missed the deletion syncs: \(late.stderr)")
        for person in [alice, bob, erin, dave] {
            person.must(["team", "sync"])
            let verified = person.run(["verify", "--container", person.teamContainer])
            XCTAssertEqual(verified.code, 0, "\(person.name)'s verify of the team: \(verified.stdout)\(verified.stderr)")
            XCTAssertEqual(person.fill("gone.example"), "exit 66", "\(person.name): the deletion holds")
        }
        _ = carol
    }

    /// Defect 2: a deletion not yet synced when an admin removes someone (re-sealing every item
    /// with revision + 1) stays a deletion on every device.
    func testADeletionNotYetSyncedSurvivesARemovalsReseal() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "doomed.example", "x"], stdin: "pw\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"]); carol.must(["team", "sync"])
        bob.must(["rm", "ops:doomed.example", "--force"])  // not synced yet
        alice.must(["team", "remove", "ops", "carol"])  // re-seals it at revision 2, pushed
        let synced = bob.must(["team", "sync"])
        XCTAssertFalse(synced.stderr.contains("edited on both"), synced.stderr)
        alice.must(["team", "sync"])
        bob.must(["team", "sync"])
        XCTAssertEqual(bob.fill("doomed.example"), "exit 66", "the deletion is not undone on the deleting device")
        XCTAssertEqual(alice.fill("doomed.example"), "exit 66", "nor on the admin's")
    }

    /// Defect 6 (the team soak, a deletion that came back): an edit pushed while an admin's
    /// removal re-sealed the item is taken as it is, not joined with the re-seal into a new
    /// revision. A joined revision looked like an edit made after the owner's deletion of it —
    /// a deletion the owner made before she ever saw the join — and brought the item back.
    func testAnEditThatCrossedARemovalsResealDoesNotOutliveALaterDeletion() throws {
        let (alice, bob, carol) = founded()
        bob.must(["add", "--team", "ops", "doomed.example", "bob"], stdin: "v1\n")
        bob.must(["team", "sync"]); alice.must(["team", "sync"])
        // Alice's removal re-seals the item (revision 2) before she sees Bob's edit, which he
        // pushes meanwhile (revision 2 too, under the key Carol held).
        let team = try teamVault(of: alice)
        let carolsEntry = try XCTUnwrap(team.teamMembership().members.first { $0.name == "carol" })
        _ = try team.removeTeamMember(carolsEntry, by: alice.personalVault().personalIdentity())
        bob.must(["edit", "ops:doomed.example/bob", "--new-password"], stdin: "v2\n")
        bob.must(["team", "sync"])
        Thread.sleep(forTimeInterval: 1.1)  // `modified` has whole seconds: the join's differs from the edit's
        let merged = alice.must(["team", "sync"])
        XCTAssertFalse(merged.stderr.contains("edited on both"), "a re-seal is no edit: \(merged.stderr)")
        XCTAssertEqual(alice.fill("doomed.example"), "v2", "Bob's edit is the item")
        // Bob deletes his item before he has seen Alice's merge, then syncs.
        bob.must(["rm", "ops:doomed.example", "--force"])
        bob.must(["team", "sync"])
        alice.must(["team", "sync"])
        bob.must(["team", "sync"])
        XCTAssertEqual(bob.fill("doomed.example"), "exit 66", "the owner's deletion holds on his device")
        XCTAssertEqual(alice.fill("doomed.example"), "exit 66", "and on the admin's")
        _ = carol
    }

    /// The other side of defect 6: an edit made before its device saw a removal's re-seal goes
    /// out as it is, raised above the re-seal, and every member takes it; nobody "edited on both".
    func testAnEditMadeBeforeSeeingARemovalsResealReachesEveryMember() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "shared.example", "x"], stdin: "v1\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"])
        alice.must(["team", "remove", "ops", "carol"])  // re-sealed at revision 2, pushed
        bob.must(["edit", "ops:shared.example/x", "--new-password"], stdin: "v2\n")  // revision 2, not synced
        let synced = bob.must(["team", "sync"])
        XCTAssertFalse(synced.stderr.contains("edited on both"), "a re-seal is no edit: \(synced.stderr)")
        alice.must(["team", "sync"])
        XCTAssertEqual(alice.fill("shared.example"), "v2", "the admin's device, which held the re-seal, takes the edit")
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(alice.must(["show", "ops:shared.example/x", "--json"]).stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["revision"] as? Int, 3, "raised above the re-seal, nothing joined")
        _ = carol
    }

    /// Defect 3: a push rejected because the remote moved merges the next round against the
    /// remote commit this device merged, not the old base: an item it never touched is not
    /// "edited on both sides", and its owner's newer password stays current.
    func testARejectedPushMergesAgainstWhatItMerged() throws {
        let (_, bob, carol) = founded()
        carol.must(["add", "--team", "ops", "z.example", "carol"], stdin: "z1\n")
        carol.must(["team", "sync"]); bob.must(["team", "sync"])
        carol.must(["edit", "ops:z.example/carol", "--new-password"], stdin: "z2\n")
        carol.must(["team", "sync"])
        bob.must(["add", "--team", "ops", "y.example", "bob"], stdin: "y1\n")
        // Between Bob's merge and his push, Carol pushes another edit of her item.
        let team = try teamVault(of: bob)
        let identity = try bob.personalVault().personalIdentity()
        nonisolated(unsafe) var pushedMeanwhile = false
        nonisolated(unsafe) let other = carol
        let report = try team.sync(SyncOptions(environment: bob.harness.environment, stepObserver: { step in
            guard step == .merged, !pushedMeanwhile else { return }
            pushedMeanwhile = true
            other.must(["edit", "ops:z.example/carol", "--new-password"], stdin: "z3\n")
            other.must(["team", "sync"])
        }, teamIdentity: { identity }))
        XCTAssertTrue(pushedMeanwhile)
        XCTAssertEqual(report.conflicts, 0, "Bob never touched z")
        carol.must(["team", "sync"])
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(carol.must(["show", "ops:z.example/carol", "--json"]).stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["password"] as? String, "z3")
        XCTAssertEqual(shown["revision"] as? Int, 3, "no new revision of Carol's item from Bob")
    }

    /// Defect 5: a login added after a removal on a device that had not synced it is sealed
    /// under the new key before anything is pushed: no object anywhere in the remote's history
    /// written after the removal opens under a key the removed member holds.
    func testNothingWrittenAfterARemovalOpensUnderTheRemovedMembersKey() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "before.example", "a"], stdin: "old\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"]); carol.must(["team", "sync"])
        let carolsKey = try teamKeys(of: carol)
        let beforeRemoval = try git(["--git-dir", remote, "rev-parse", "main"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        alice.must(["team", "remove", "ops", "carol"])
        bob.must(["add", "--team", "ops", "after.example", "b"], stdin: "new-secret\n")  // under the key Carol holds
        bob.must(["rm", "ops:before.example", "--force"])  // a tombstone under it too
        bob.must(["team", "sync"])
        alice.must(["team", "sync"])

        // Every (path, object) the remote's history holds, against those it held before.
        func files(_ revisions: [String]) throws -> Set<String> {
            var found: Set<String> = []
            for commit in revisions where !commit.isEmpty {
                let listing = try git(["--git-dir", remote, "ls-tree", "-r", commit, "records", "tombstones"]).stdout
                for line in listing.split(separator: "\n") {
                    let parts = line.split(separator: "\t")
                    found.insert(String(parts[1]) + " " + String(parts[0].split(separator: " ")[2]))
                }
            }
            return found
        }
        let all = try files(git(["--git-dir", remote, "rev-list", "--all"]).stdout.split(separator: "\n").map(String.init))
        let before = try files(git(["--git-dir", remote, "rev-list", beforeRemoval]).stdout.split(separator: "\n").map(String.init))
        var checked = 0
        for file in all.subtracting(before) {
            let parts = file.split(separator: " ")
            let path = String(parts[0]), object = String(parts[1])
            let id = try RecordID(hex: String(path.split(separator: "/").last!))
            let bytes = try gitBytes(["--git-dir", remote, "cat-file", "blob", object])
            if path.hasPrefix("records/") {
                XCTAssertThrowsError(try RecordSealing.open(bytes, id: id, vaultID: carolsKey.0, key: carolsKey.1), "\(path) \(object) opens under Carol's key")
            } else {
                XCTAssertThrowsError(try Tombstone.open(bytes, id: id, vaultID: carolsKey.0, key: carolsKey.1), "\(path) \(object) opens under Carol's key")
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
        XCTAssertEqual(alice.fill("after.example"), "new-secret")
    }

    /// Defect 6: a reader that took the team's keys before another process rotated them reads
    /// after the rotation with the keys the team names now, through the owner's identity.
    func testAReaderThatMeetsARotationReadsOnAndNeverCallsItTampering() throws {
        let (alice, _, _) = founded()
        alice.must(["add", "--team", "ops", "fill.example", "a"], stdin: "pw\n")
        alice.must(["team", "sync"])
        let reader = try teamVault(of: alice)  // this process's keys: the key before the rotation
        let id = try XCTUnwrap(reader.identityStore.items(named: "").first?.recordID
            ?? reader.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "fill.example")]).first
                .flatMap { try? RecordID(hex: $0.identity.recordIdentifier) })
        alice.must(["team", "remove", "ops", "carol"])  // another process rotates
        XCTAssertEqual(try reader.record(withID: id).password, "pw")
        XCTAssertEqual(try reader.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "fill.example")]).count, 1)
    }

    /// Defect 7: a conflict never puts the merged record's own password in its history.
    func testAConflictKeepsTheCurrentPasswordOutOfTheHistory() throws {
        let id = try RecordID.random()
        func version(_ password: String, revision: UInt64, modified: Double, history: [String]) throws -> RecordVersion {
            let record = Record(
                id: id, serviceIdentifiers: [], user: "u", password: password, created: Date(timeIntervalSince1970: 0),
                modified: Date(timeIntervalSince1970: modified), revision: revision,
                passwordHistory: history.map { PasswordHistoryEntry(password: $0, replaced: Date(timeIntervalSince1970: 10)) })
            return RecordVersion(object: password, bytes: [], record: record, hash: Array(repeating: UInt8(revision), count: 32))
        }
        let winner = try version("B", revision: 4, modified: 40, history: ["A"])
        let loser = try version("A", revision: 3, modified: 30, history: ["B"])
        let merged = SyncMerge.resolve(winner, loser, now: Date(timeIntervalSince1970: 50)).merged
        XCTAssertEqual(merged.password, "B")
        XCTAssertFalse(merged.passwordHistory.contains { $0.password == "B" }, "\(merged.passwordHistory)")
        XCTAssertTrue(merged.passwordHistory.contains { $0.password == "A" })
    }

    /// Defect 4: a membership change holds the team's lease, and a member's sync does not push
    /// while it sees one fresh (SPEC.md §16.5): the change wins its turn however busy the team.
    func testAMembersSyncWaitsForAnAdminsLease() throws {
        let (alice, bob, _) = founded()
        bob.must(["add", "--team", "ops", "busy.example", "bob"], stdin: "pw\n")
        let admin = try teamVault(of: alice), member = try teamVault(of: bob)
        let identity = try bob.personalVault().personalIdentity()
        var adminOptions = SyncOptions(environment: alice.harness.environment)
        adminOptions.leaseSeconds = 3
        var memberOptions = SyncOptions(environment: bob.harness.environment, teamIdentity: { identity })
        memberOptions.leaseSeconds = 3
        let before = try git(["--git-dir", remote, "rev-parse", "main"]).stdout
        let report = try admin.withMembershipLease(adminOptions) { lease -> SyncReport in
            XCTAssertNotNil(lease)
            XCTAssertEqual(try git(["--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/coffer-lease"]).stdout.trimmingCharacters(in: .newlines), lease)
            let started = Date()
            let report = try member.sync(memberOptions)
            // When it first saw the lease is kept in whole seconds: 3 s of lease are 2–3 s of waiting.
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.9, "the member held back while the lease was fresh")
            return report
        }
        XCTAssertGreaterThan(report.leaseWait, .zero)
        XCTAssertTrue(report.pushed, "and pushed once it had waited the lease's time")
        XCTAssertNotEqual(try git(["--git-dir", remote, "rev-parse", "main"]).stdout, before)
        XCTAssertEqual(try git(["--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/coffer-lease"]).code, 1, "the lease is given back")
        // Without a lease on the remote nobody waits.
        bob.must(["add", "--team", "ops", "free.example", "bob"], stdin: "pw\n")
        XCTAssertEqual(try member.sync(memberOptions).leaseWait, .zero)
    }

    // MARK: A removed member is told so, once (issue 49, item 5)

    func testARemovedMemberIsToldWhoAndWhenAndTheTeamIsLeftOutAfterwards() throws {
        let (alice, bob, _) = founded()
        alice.must(["add", "--team", "ops", "shared.example", "a"], stdin: "pw\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"])
        alice.must(["team", "remove", "ops", "bob"])
        let told = bob.run(["team", "sync"])
        XCTAssertEqual(told.code, 77, told.stderr)
        let today = String(UTCTimestamp.format(Date()).prefix(10))
        XCTAssertTrue(told.stderr.contains("you were removed from team 'ops' on \(today) by alice"), told.stderr)
        XCTAssertTrue(told.stderr.contains("coffer team leave ops"), told.stderr)
        for command in [["list"], ["fill", "shared.example"], ["search", "shared"]] {
            let after = bob.run(command)
            XCTAssertFalse(after.stderr.contains("corrupt") || after.stderr.contains("tampered") || after.stderr.contains("left out"),
                           "\(command): \(after.stderr)")
            XCTAssertFalse(after.stdout.contains("ops:"), "\(command): the team is left out: \(after.stdout)")
        }
        XCTAssertTrue(bob.must(["team", "list"]).stdout.contains("ops\tremoved on \(today) by alice"))
        XCTAssertEqual(bob.must(["show", "ops:shared.example"]).stdout.hasPrefix("pw\n"), true, "what bob had, he can still read by name")
        XCTAssertEqual(bob.run(["sync"]).code, 78, "nothing of bob's syncs any more (his own vault has no remote)")
        bob.must(["team", "leave", "ops", "--force"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: bob.teamContainer), "the copy is gone")
        XCTAssertEqual(bob.must(["team", "list"]).stdout, "")
    }

    /// Without a notice for them (the file was replaced by someone who can push), a member is
    /// told only what is known: no sealed key for them on the remote (issue 51, item 6).
    func testAMissingSlotWithoutANoticeSaysWhatIsKnown() throws {
        let (alice, bob, _) = founded()
        alice.must(["team", "sync"]); bob.must(["team", "sync"])
        // Someone who can push but holds no key of the team replaces its list: a key of their
        // own, sealed to others, no notice to Bob. His device cannot open it, and finds no slot.
        let team = try teamVault(of: alice)
        let membership = try team.teamMembership()
        let file = try TeamKeys.seal(try VaultKeys(vaultKey: SecureBytes.random(count: VaultKeys.length)), teamID: team.vaultID,
                                     entries: membership.entries, recipients: membership.members.filter { $0.name != "bob" }.map(\.recipient))
        let work = root + "/forger"
        XCTAssertEqual(try git(["clone", "-q", remote, work]).code, 0)
        try Data(file.encoded).write(to: URL(fileURLWithPath: work + "/team.coffer"))
        XCTAssertEqual(try git(["-C", work, "commit", "-qam", "coffer: 1 change"]).code, 0)
        XCTAssertEqual(try git(["-C", work, "push", "-q", "origin", "HEAD:main"]).code, 0)
        let refused = bob.run(["team", "sync"])
        XCTAssertEqual(refused.code, 77, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("holds no sealed key for you") && refused.stderr.contains("replaced by someone who can push"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("you were removed"), refused.stderr)
        XCTAssertFalse(bob.must(["team", "list"]).stdout.contains("removed"), "an unproven removal leaves the team in place")
    }

    /// `coffer sync` syncs one's own vault and every team (issue 49, item 5).
    func testCofferSyncSyncsEveryTeam() throws {
        let (alice, bob, _) = founded()
        alice.must(["add", "--team", "ops", "team.example", "a"], stdin: "pw\n")
        let synced = alice.run(["sync"])
        XCTAssertEqual(synced.code, 0, "no remote of her own, but a team: \(synced.stderr)")
        XCTAssertTrue(synced.stderr.contains("team 'ops':"), synced.stderr)
        let json = bob.must(["sync", "--json"]).stdout
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(((object["teams"] as? [String: Any])?["ops"] as? [String: Any])?["pushed"] as? Bool, false)
        XCTAssertEqual(bob.fill("team.example"), "pw")
        // COFFER_AUTOSYNC: a change to a team syncs that team.
        bob.harness.environment["COFFER_AUTOSYNC"] = "1"
        let auto = bob.must(["add", "--team", "ops", "auto.example", "b"], stdin: "pw2\n")
        XCTAssertFalse(auto.stderr.contains("warning"), auto.stderr)
        alice.must(["sync"])
        XCTAssertEqual(alice.fill("auto.example"), "pw2")
    }

    /// `audit`'s `exposed` does not flag an item made after a removal in the same second.
    func testAnItemMadeAfterARemovalInItsSecondIsNotExposed() throws {
        let (alice, _, _) = founded()
        alice.must(["add", "--team", "ops", "before.example", "a"], stdin: "pw\n")
        alice.must(["team", "sync"])
        // Wait for a fresh second, so the removal and the add below share it.
        let start = Date().timeIntervalSince1970
        Thread.sleep(forTimeInterval: ceil(start) - start + 0.01)
        alice.must(["team", "remove", "ops", "carol"])
        alice.must(["add", "--team", "ops", "after.example", "a"], stdin: "pw2\n")
        let audit = alice.run(["audit"]).stdout
        XCTAssertTrue(audit.contains("exposed\tops:before.example"), audit)
        XCTAssertFalse(audit.contains("exposed\tops:after.example"), audit)
    }
}
