import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferTeams
@testable import CofferFormat
import Foundation
import XCTest

/// The independent reference's team vault (SPEC.md §18): Swift derives the same identities,
/// signs the same entries byte for byte, seals the same membership block, opens the reference's
/// `team.coffer` with the members' identities, refuses it to the removed one, and refuses every
/// forged chain the reference refuses.
final class TeamVectorTests: XCTestCase {
    let vector = try! VectorFile.load("team/team.vector")

    func identity(_ name: String) throws -> PersonalIdentity {
        try PersonalIdentity(keys: VaultKeys(vaultKey: SecureBytes(copying: vector.hex(name + "_vault_key"))))
    }

    func testIdentitiesRecipientsAndFingerprints() throws {
        for name in ["alice", "bob", "carol"] {
            let recipient = try identity(name).recipient
            XCTAssertEqual(recipient.text, vector.string(name + "_recipient"), name)
            XCTAssertEqual(recipient.fingerprint, vector.string(name + "_fingerprint"), name)
            XCTAssertEqual(try TeamRecipient(text: vector.string(name + "_recipient")), recipient)
        }
        let text = vector.string("alice_recipient")
        for broken in [String(text.dropLast()), text.uppercased(), "coffer2" + text.dropFirst(7), text + "a",
                       String(text.prefix(40)) + (text[text.index(text.startIndex, offsetBy: 40)] == "a" ? "b" : "a") + text.dropFirst(41)] {
            XCTAssertThrowsError(try TeamRecipient(text: broken), broken)
        }
    }

    func testTheChainIsSignedAndVerifiedAsTheReferenceDoes() throws {
        let teamID = try VaultID(bytes: vector.hex("team_id"))
        let entries = try (0..<5).map { try MembershipEntry.decode(vector.hex("entry\($0)")[...]) }
        for (index, entry) in entries.enumerated() {
            XCTAssertEqual(entry.encoded, vector.hex("entry\(index)"))
            XCTAssertEqual(entry.hash, vector.hex("entry\(index)_hash"))
        }
        // Ed25519 is deterministic: signing the same fields gives the same bytes.
        var again = entries[3]
        again.signature = []
        try again.sign(with: identity("carol").signing, teamID: teamID)
        XCTAssertEqual(again.encoded, vector.hex("entry3"))
        let membership = try TeamMembership(entries: entries, teamID: teamID, founder: identity("alice").signing.publicKey)
        XCTAssertEqual(membership.members.map(\.name), ["alice", "carol"])
        XCTAssertEqual(membership.members.map(\.isAdmin), [true, false])
        XCTAssertEqual(membership.keyID, vector.hex("key_id_2"))
        XCTAssertEqual(membership.earlierKeyIDs, [vector.hex("key_id_1")])
        XCTAssertEqual(membership.teamName, "ops")
        XCTAssertThrowsError(try TeamMembership(entries: entries, teamID: teamID, founder: identity("bob").signing.publicKey))
        XCTAssertThrowsError(try TeamMembership(entries: entries, teamID: VaultID.random()), "the team id is signed")

        let refusals = vector.lines.filter { $0.key.hasPrefix("refuse_") }
        XCTAssertEqual(refusals.count, 10)
        for (key, value) in refusals {
            let parts = value.components(separatedBy: " => ")
            let chain = try parts[0].split(separator: ",").map { try MembershipEntry.decode(hexBytes(String($0))[...]) }
            XCTAssertThrowsError(try TeamMembership(entries: chain, teamID: teamID), "\(key): \(parts[1])") { error in
                guard case TeamError.refused = error else { return XCTFail("\(key): \(error)") }
            }
        }
        // A remove or role entry's name is informative: accepted, and the member keeps theirs.
        let renamed = try vector.string("accept_informative_names").components(separatedBy: " => ")[0].split(separator: ",")
            .map { try MembershipEntry.decode(hexBytes(String($0))[...]) }
        XCTAssertEqual(try TeamMembership(entries: renamed, teamID: teamID).members.map(\.name), ["alice", "carol"])
        XCTAssertThrowsError(try MembershipEntry.decode(vector.hex("short_entry_244")[...]), "the shortest entry is 245 bytes")
    }

    func testTeamFileOpensForMembersOnlyAndTheBlockIsSealedTheSame() throws {
        let teamID = try VaultID(bytes: vector.hex("team_id"))
        let file = try TeamKeyFile.decode(vector.hex("team_file"))
        XCTAssertEqual(file.encoded, vector.hex("team_file"))
        for name in ["alice", "carol"] {
            let (membership, keys) = try TeamKeys.open(file, identity: identity(name), founder: identity("alice").signing.publicKey)
            XCTAssertEqual(membership.members.map(\.name), ["alice", "carol"], name)
            XCTAssertEqual(keys.vaultKey.withUnsafeBytes { Array($0) }, vector.hex("team_key_2"))
            XCTAssertEqual(keys.previous.map { $0.vaultKey.withUnsafeBytes { Array($0) } }, [vector.hex("team_key_1")])
        }
        XCTAssertThrowsError(try TeamKeys.open(file, identity: identity("bob"), founder: nil)) { error in
            XCTAssertEqual(error as? TeamError, .notMember(team: ""), "bob was removed")
        }
        let (membership, keys) = try TeamKeys.open(file, identity: identity("carol"), founder: nil)
        let sealed = try TeamKeys.seal(keys, membership: membership, nonce: vector.hex("block_nonce"))
        XCTAssertEqual(sealed.sealedMembership, vector.hex("sealed_block"))
        XCTAssertEqual(sealed.slots.map(\.slotID), file.slots.map(\.slotID))
        XCTAssertEqual(sealed.teamID, teamID)
        // A slot moved, removed or added, and a block under another key: refused.
        var reordered = file
        reordered.slots.reverse()
        XCTAssertThrowsError(try TeamKeys.open(reordered, identity: identity("carol"), founder: nil))
        var extra = file
        extra.slots.append(file.slots[0])
        XCTAssertThrowsError(try TeamKeys.open(extra, identity: identity("carol"), founder: nil))
        var flipped = file
        flipped.sealedMembership[30] ^= 1
        XCTAssertThrowsError(try TeamKeys.open(flipped, identity: identity("carol"), founder: nil))
    }

    /// Version 2 (SPEC.md §16.3): the list with a notice of Bob's removal sealed to him. The
    /// members open it as before; Bob, who has no slot, reads who removed him and when; the
    /// block is sealed the same under the version 2 preamble.
    func testAVersionTwoFileTellsTheRemovedMemberWhoAndWhen() throws {
        let file = try TeamKeyFile.decode(vector.hex("team_file_v2"))
        XCTAssertEqual(file.version, 2)
        XCTAssertEqual(file.encoded, vector.hex("team_file_v2"))
        for name in ["alice", "carol"] {
            XCTAssertEqual(try TeamKeys.open(file, identity: identity(name), founder: identity("alice").signing.publicKey).0.members.map(\.name),
                           ["alice", "carol"], name)
        }
        let bob = try identity("bob")
        XCTAssertThrowsError(try TeamKeys.open(file, identity: bob, founder: nil))
        let told = try XCTUnwrap(TeamKeys.removalNotice(in: file, for: bob))
        XCTAssertEqual(told.action, .remove)
        XCTAssertEqual(told.signer, try identity("carol").signing.publicKey)
        XCTAssertEqual(told.time, 1_700_000_003)
        XCTAssertNil(TeamKeys.removalNotice(in: file, for: try identity("alice")), "no notice for a member")
        let (membership, keys) = try TeamKeys.open(file, identity: identity("carol"), founder: nil)
        XCTAssertEqual(try TeamKeys.seal(keys, membership: membership, notices: file.notices, nonce: vector.hex("block_nonce")).sealedMembership,
                       vector.hex("sealed_block_v2"))
        // A notice whose entry removes someone else, or is not signed for this team, is no notice.
        var forged = file
        forged.notices = [TeamKeyFile.Notice(slotID: file.notices[0].slotID, sealedEntry: try SealedBoxKeyPair.seal(
            SecureBytes(copying: MembershipEntry.decode(vector.hex("entry1")[...]).encoded), to: bob.recipient.receivingKey))]
        XCTAssertNil(TeamKeys.removalNotice(in: forged, for: bob), "an add entry is no removal")
        var version1 = Array(vector.hex("team_file_v2"))
        version1[7] = 1
        XCTAssertThrowsError(try TeamKeys.open(TeamKeyFile.decode(version1), identity: identity("carol"), founder: nil),
                             "the version byte is bound to the block")
    }

    /// A hostile remote's bytes: every truncation and thousands of random flips of the
    /// reference's file are refused (never a crash, never another membership).
    func testDamagedTeamFilesAreRefused() throws {
        let original = vector.hex("team_file")
        let carol = try identity("carol")
        var generator = SystemRandomNumberGenerator()
        var cases = (0..<original.count).map { Array(original.prefix($0)) }
        for _ in 0..<2_000 {
            var bytes = original
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            cases.append(bytes)
        }
        for bytes in cases {
            // A flip inside another member's sealed key is the one change carol cannot see:
            // only alice's own copy is damaged (§16.3); everything else is refused.
            guard let file = try? TeamKeyFile.decode(bytes), let (membership, _) = try? TeamKeys.open(file, identity: carol, founder: nil) else { continue }
            XCTAssertEqual(membership.members.map(\.name), ["alice", "carol"])
            XCTAssertEqual(file.slots.map(\.slotID), try TeamKeyFile.decode(original).slots.map(\.slotID))
        }
    }

    private func hexBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
