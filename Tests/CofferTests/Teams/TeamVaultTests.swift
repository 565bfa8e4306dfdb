import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferTeams
@testable import CofferFormat
import Foundation
import XCTest

/// Team vaults through the library (SPEC.md §16): what the CLI tests cannot reach directly.
final class TeamVaultTests: XCTestCase {
    func person() throws -> PersonalIdentity {
        try PersonalIdentity(keys: VaultKeys(vaultKey: SecureBytes.random(count: 32)))
    }

    /// A team's keyring session lives with its owner's (SPEC.md §16.6): using the team re-arms
    /// one's own session, and once one's own has ended the team's is no way in.
    func testATeamsSessionLivesWithItsOwners() throws {
        let owner = try Fixture.vault()
        let team = try Vault.createTeam(
            named: "ops", founder: owner.personalIdentity(), founderName: "alice", owner: owner.container,
            in: GroupContainer(path: Fixture.containerPath("team")), configuration: owner.configuration)
        let sessions = KeyringSessions()
        defer { _ = try? sessions.revoke(for: owner.vaultID); _ = try? sessions.revoke(for: team.vaultID) }
        try sessions.store(vaultKey: owner.keys().vaultKey, for: owner.vaultID, idleTimeout: 3600)
        try sessions.store(vaultKey: team.keys().vaultKey, for: team.vaultID, idleTimeout: 3600)
        let door = HostSession(container: team.container, configuration: owner.configuration, sessions: sessions, interaction: nil)
        // Last use is kept in whole seconds: 2.1 s on, an unused session has at most 3,597.9 left.
        Thread.sleep(forTimeInterval: 2.1)
        XCTAssertTrue(door.unlockFromSession(try Fixture.open(team)))
        guard case .unlocked(let remaining, _) = try sessions.status(for: owner.vaultID) else { return XCTFail("one's own session ended") }
        XCTAssertGreaterThan(remaining, 3598.5, "using the team re-arms one's own session")

        try sessions.revoke(for: owner.vaultID)
        let later = try Fixture.open(team)
        XCTAssertFalse(door.unlockFromSession(later), "one's own session ended: the team's is no way in")
        XCTAssertFalse(later.isUnlocked)
        XCTAssertEqual(try sessions.status(for: team.vaultID), .locked, "and the team's ended with it")
    }

    /// A team unlocked from a keyring session holds only its current key; a change of members
    /// made then still carries the earlier keys, so nothing sealed before a removal is lost.
    func testAChangeMadeWithOnlyTheCurrentKeyKeepsTheEarlierKeys() throws {
        let (alice, bob, carol, dave) = (try person(), try person(), try person(), try person())
        let configuration = Fixture.configuration()
        let container = GroupContainer(path: Fixture.containerPath("team"))
        let team = try Vault.createTeam(
            named: "ops", founder: alice, founderName: "alice", owner: GroupContainer(path: Fixture.containerPath()), in: container,
            configuration: configuration)
        let old = try team.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "old.example")], user: "u", password: "before"))
        try team.addTeamMember(bob.recipient, name: "bob", admin: false, by: alice)
        try team.addTeamMember(carol.recipient, name: "carol", admin: false, by: alice)
        let carolMember = try XCTUnwrap(team.teamMembership().members.first { $0.name == "carol" })
        _ = try team.removeTeamMember(carolMember, by: alice)

        let fromSession = try Vault.open(container, configuration: configuration)
        try fromSession.unlock(vaultKey: team.keys().vaultKey)
        XCTAssertTrue(try fromSession.keys().previous.isEmpty)
        try fromSession.addTeamMember(dave.recipient, name: "dave", admin: false, by: alice)

        let (membership, keys) = try TeamKeys.open(
            TeamKeyFile.decode(FileSystem.standard.readFile("team.coffer", in: fromSession.openContainer().root, limit: 1 << 20)),
            identity: bob, founder: alice.signing.publicKey)
        XCTAssertEqual(membership.members.map(\.name), ["alice", "bob", "dave"])
        XCTAssertEqual(keys.previous.count, 1, "the key before carol's removal is still there")
        XCTAssertEqual(try fromSession.record(withID: old.id).password, "before")
        XCTAssertThrowsError(try TeamKeys.open(
            TeamKeyFile.decode(FileSystem.standard.readFile("team.coffer", in: fromSession.openContainer().root, limit: 1 << 20)),
            identity: carol, founder: nil))
    }
}
