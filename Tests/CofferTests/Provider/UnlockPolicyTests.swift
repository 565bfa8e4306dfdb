import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// One unlock policy for the provider and every host (issue 52, item 3; SPEC.md §8.3): the
/// attempts counted once, a team proven through its owner, sessions started only where the host
/// asks, and a supplied password never replaced by a session.
final class UnlockPolicyTests: XCTestCase {
    let sessions = KeyringSessions()
    var revoke: [VaultID] = []

    override func tearDown() {
        for id in revoke { _ = try? sessions.revoke(for: id) }
    }

    func testThreeAttemptsCountedOnceWhoeverAsks() throws {
        let vault = try Fixture.open(try Fixture.vault())
        let interaction = ScriptedInteraction(passwords: ["wrong 1", "wrong 2", "wrong 3", Fixture.password])
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: interaction)
        XCTAssertEqual(try policy.unlock(vault, reason: "a test"), .wrongPassword)
        XCTAssertEqual(interaction.passwordRequests, 3)
        XCTAssertFalse(vault.isUnlocked)

        // The provider asks through the same policy: the same three, not a loop of its own.
        let provider = CredentialProvider(vault: vault, interaction: interaction, unlockPolicy: policy)
        let asking = ScriptedInteraction(passwords: ["wrong", "wrong", "wrong"])
        let through = CredentialProvider(
            vault: vault, interaction: asking, unlockPolicy: UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: asking))
        through.prepareInterfaceForExtensionConfiguration()
        XCTAssertEqual(asking.passwordRequests, 3)
        guard case .cancelled? = through.extensionContext.outcome else { return XCTFail("three wrong passwords cancel the request") }
        _ = provider
    }

    func testProvingAsksEvenWhenUnlockedAndATeamProvesItsOwnersPassword() throws {
        let owner = try Fixture.vault()
        let team = try Vault.createTeam(
            named: "ops", founder: owner.personalIdentity(), founderName: "alice", owner: owner.container,
            in: GroupContainer(path: Fixture.containerPath("team")), configuration: owner.configuration)
        XCTAssertTrue(team.isUnlocked)
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let policy = UnlockPolicy(configuration: owner.configuration, sessions: nil, interaction: interaction)
        XCTAssertEqual(try policy.unlock(team, reason: "a passkey", proving: true), .unlocked)
        XCTAssertEqual(interaction.passwordRequests, 1, "the owner's password was asked though the team was unlocked")
        XCTAssertTrue(policy.userVerification.isRecent)

        let cancelling = ScriptedInteraction(passwords: [nil])
        let refused = UnlockPolicy(configuration: owner.configuration, sessions: nil, interaction: cancelling)
        XCTAssertEqual(try refused.unlock(team, reason: "a passkey", proving: true), .cancelled)
        XCTAssertFalse(refused.userVerification.isRecent, "nothing proven")
    }

    func testSessionsStartOnlyWhereTheHostAsksAndASuppliedPasswordIsAlwaysChecked() throws {
        let created = try Fixture.vault()
        revoke.append(created.vaultID)
        let vault = try Fixture.open(created)
        let quiet = UnlockPolicy(configuration: vault.configuration, sessions: sessions, interaction: ScriptedInteraction(passwords: [Fixture.password]))
        quiet.startsSessions = false
        XCTAssertEqual(try quiet.unlock(vault, reason: "a command"), .unlocked)
        XCTAssertEqual(try sessions.status(for: vault.vaultID), .locked, "a command's unlock starts no session")

        let desktop = UnlockPolicy(configuration: vault.configuration, sessions: sessions, interaction: ScriptedInteraction(passwords: [Fixture.password]))
        let again = try Fixture.open(created)
        XCTAssertEqual(try desktop.unlock(again, reason: "a desktop host"), .unlocked)
        guard case .unlocked? = try? sessions.status(for: vault.vaultID) else { return XCTFail("a desktop host's unlock starts one") }

        // A live session, but a script supplied the password: it is read and checked.
        let script = ScriptedInteraction(passwords: ["not the password"])
        let supplied = UnlockPolicy(configuration: vault.configuration, sessions: sessions, interaction: script)
        supplied.unlocksFromSessions = false
        let scripted = try Fixture.open(created)
        XCTAssertNotEqual(try supplied.unlock(scripted, reason: "a script"), .unlocked, "a wrong supplied password, though a session was live")
        XCTAssertGreaterThanOrEqual(script.passwordRequests, 1)
        XCTAssertFalse(scripted.isUnlocked)

        // Ended in one place: the vault here and its session.
        let locked = try Fixture.open(created)
        XCTAssertTrue(desktop.unlockFromSession(locked))
        XCTAssertTrue(try desktop.lockReportingErrors(locked))
        XCTAssertFalse(locked.isUnlocked)
        XCTAssertEqual(try sessions.status(for: vault.vaultID), .locked)
    }
}
