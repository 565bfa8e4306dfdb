import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class VaultLifecycleTests: XCTestCase {
    func testCreateOpenUnlockLock() throws {
        let vault = try Fixture.vault()
        XCTAssertTrue(vault.isUnlocked)
        let reopened = try Fixture.open(vault)
        XCTAssertFalse(reopened.isUnlocked)
        XCTAssertEqual(reopened.vaultID, vault.vaultID)
        XCTAssertThrows(try reopened.allRecords()) { $0 as? VaultError == .locked }
        try reopened.unlock(masterPassword: Fixture.secret())
        XCTAssertEqual(try reopened.allRecords(), [])
        reopened.lock()
        XCTAssertFalse(reopened.isUnlocked)
        XCTAssertThrows(try reopened.add(Fixture.draft())) { $0 as? VaultError == .locked }
    }

    func testUnlockingDisablesCoreDumps() throws {
        let vault = try Fixture.vault()
        XCTAssertFalse(ProcessHardening.isDumpable, "a process holding a vault key must not dump core")
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        XCTAssertEqual(limit.rlim_cur, 0)
        _ = vault
    }

    func testWrongPasswordIsItsOwnError() throws {
        let vault = try Fixture.vault()
        let reopened = try Fixture.open(vault)
        XCTAssertThrows(try reopened.unlock(masterPassword: Fixture.secret("wrong"))) { $0 as? VaultError == .wrongPassword }
        XCTAssertThrows(try reopened.unlock(masterPassword: Fixture.secret(Fixture.password + " "))) { $0 as? VaultError == .wrongPassword }
        XCTAssertFalse(reopened.isUnlocked)
    }

    func testCorruptHeaderIsNotReportedAsWrongPassword() throws {
        let vault = try Fixture.vault()
        var bytes = try Fixture.bytes(vault.container.headerPath)
        bytes[45] ^= 1  // inside the salt
        try Fixture.write(bytes, to: vault.container.headerPath)
        XCTAssertThrows(try Fixture.open(vault)) {
            if case VaultError.corrupt(let file, _) = $0 { return file.hasSuffix("vault.coffer") }
            return false
        }
    }

    func testEmptyAndTruncatedHeadersAreCorrupt() throws {
        let vault = try Fixture.vault()
        let bytes = try Fixture.bytes(vault.container.headerPath)
        for candidate in [[], Array(bytes.prefix(100))] {
            try Fixture.write(candidate, to: vault.container.headerPath)
            XCTAssertThrows(try Fixture.open(vault)) { isRejected($0) }
        }
    }

    func testMissingVaultAndExistingVault() throws {
        let path = Fixture.containerPath()
        mkdir(path, 0o700)
        XCTAssertThrows(try Vault.open(GroupContainer(path: path))) { $0 as? VaultError == .noVault(container: path) }
        _ = try Vault.create(in: GroupContainer(path: path), masterPassword: Fixture.secret(), kdf: KDFPolicy.testingParameters, configuration: Fixture.configuration())
        XCTAssertThrows(try Vault.create(in: GroupContainer(path: path), masterPassword: Fixture.secret(), kdf: KDFPolicy.testingParameters, configuration: Fixture.configuration())) {
            $0 as? VaultError == .vaultExists(container: path)
        }
    }

    func testEmptyMasterPasswordIsRefused() {
        XCTAssertThrows(try Vault.create(
            in: GroupContainer(path: Fixture.containerPath()), masterPassword: Fixture.secret(""), kdf: KDFPolicy.testingParameters, configuration: Fixture.configuration())
        ) { if case VaultError.invalidInput = $0 { return true }; return false }
    }

    func testChangingThePasswordRewrapsOnlyTheHeader() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let recordBytes = try Fixture.bytes(vault.container.recordPath(record.id))
        XCTAssertThrows(try vault.changeMasterPassword(current: Fixture.secret("nope"), new: Fixture.secret("new one"))) {
            $0 as? VaultError == .wrongPassword
        }
        try vault.changeMasterPassword(current: Fixture.secret(), new: Fixture.secret("new one"))
        XCTAssertEqual(try Fixture.bytes(vault.container.recordPath(record.id)), recordBytes, "no record is rewritten")

        let reopened = try Fixture.open(vault)
        XCTAssertThrows(try reopened.unlock(masterPassword: Fixture.secret())) { $0 as? VaultError == .wrongPassword }
        try reopened.unlock(masterPassword: Fixture.secret("new one"))
        XCTAssertEqual(try reopened.record(withID: record.id).password, "hunter2")
    }

    func testUnlockWithExportedVaultKey() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        let reopened = try Fixture.open(vault)
        try reopened.unlock(vaultKey: vault.keys().vaultKey)
        XCTAssertEqual(try reopened.record(withID: record.id).user, "alice")
    }

    func testStaleTemporaryFilesAreRemovedOnOpen() throws {
        let vault = try Fixture.vault()
        let stale = vault.container.temporaryDirectory + "/deadbeef.tmp"
        try Fixture.write([1, 2, 3], to: stale)
        _ = try Fixture.open(vault)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale))
    }

    /// The emptiness check reads raw directory entries: names that begin like "." and ".."
    /// are files all the same.
    func testStaleTemporaryFilesNamedLikeDotsAreRemovedOnOpen() throws {
        let vault = try Fixture.vault()
        for name in ["...", "..x", ".y"] {
            let stale = vault.container.temporaryDirectory + "/" + name
            try Fixture.write([1], to: stale)
            _ = try Fixture.open(vault)
            XCTAssertFalse(FileManager.default.fileExists(atPath: stale), name)
        }
    }

    func testStaleTemporaryFilesSurviveWhileAWriterHoldsTheLock() throws {
        let vault = try Fixture.vault()
        let inFlight = vault.container.temporaryDirectory + "/cafebabe.tmp"
        try Fixture.write([1], to: inFlight)
        try vault.fileLock(vault.openContainer()).withLock(.exclusive) {
            _ = try Fixture.open(vault)
            XCTAssertTrue(FileManager.default.fileExists(atPath: inFlight), "a live writer's temp file is not stale")
        }
    }
}
