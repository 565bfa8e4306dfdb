import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// `coffer unlock`'s sessions in the kernel keyring (SPEC.md §8.4): one vault's key, for this
/// user, until revoked; a vault opens from its own session only.
final class KeyringSessionTests: XCTestCase {
    let sessions = KeyringSessions()

    func testASessionUnlocksItsVaultUntilRevoked() throws {
        let vault = try Fixture.vault()
        let other = try Fixture.vault()
        defer { _ = try? sessions.revoke(for: vault.vaultID); _ = try? sessions.revoke(for: other.vaultID) }
        try sessions.store(vaultKey: try vault.keys().vaultKey, for: vault.vaultID, idleTimeout: 600)

        let reopened = try Vault.open(vault.container, configuration: vault.configuration)
        XCTAssertTrue(try reopened.unlock(fromSessions: sessions), "the session's key opens the vault")
        let stranger = try Vault.open(other.container, configuration: other.configuration)
        XCTAssertFalse(try stranger.unlock(fromSessions: sessions), "another vault has no session")
        guard case .unlocked(_, let idle) = try sessions.status(for: vault.vaultID) else { return XCTFail("no session") }
        XCTAssertEqual(idle, 600)

        XCTAssertTrue(try sessions.revoke(for: vault.vaultID))
        XCTAssertEqual(try sessions.status(for: vault.vaultID), .locked)
        let afterLock = try Vault.open(vault.container, configuration: vault.configuration)
        XCTAssertFalse(try afterLock.unlock(fromSessions: sessions), "revoked for every process at once")
        XCTAssertFalse(try sessions.revoke(for: vault.vaultID), "nothing left to revoke")
    }
}
