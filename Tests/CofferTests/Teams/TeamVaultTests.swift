@testable import Coffer
import Foundation
import XCTest

/// Team vaults through the library (SPEC.md §19): what the CLI tests cannot reach directly.
final class TeamVaultTests: XCTestCase {
    func person() throws -> PersonalIdentity {
        try PersonalIdentity(keys: VaultKeys(vaultKey: SecureBytes.random(count: 32)))
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
