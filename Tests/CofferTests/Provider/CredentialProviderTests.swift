import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// A user who types the given answers: passwords (`nil` = cancel) and a choice.
final class ScriptedInteraction: UserInteraction {
    var passwords: [String?]
    var choice: (([PasswordCredentialIdentity]) -> PasswordCredentialIdentity?)?
    private(set) var passwordRequests = 0

    init(passwords: [String?] = [], choice: (([PasswordCredentialIdentity]) -> PasswordCredentialIdentity?)? = { $0.first }) {
        self.passwords = passwords
        self.choice = choice
    }

    func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        passwordRequests += 1
        guard !passwords.isEmpty, let next = passwords.removeFirst() else { return nil }
        return Fixture.secret(next)
    }

    private(set) var offered: [RankedIdentity] = []

    func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity? {
        offered = identities
        return choice?(identities.map(\.identity))
    }
}

final class CredentialProviderTests: XCTestCase {
    var vault: Vault!
    var record: Record!
    var identity: PasswordCredentialIdentity!
    let sessions = KeyringSessions()

    override func setUpWithError() throws {
        vault = try Fixture.vault()
        record = try vault.add(Fixture.draft("example.com", user: "alice", password: "S3cretPassword"))
        identity = PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: "example.com", type: .domain), user: "alice",
            recordIdentifier: record.id.hex)
        vault = try Fixture.open(vault)  // start locked, as a fresh extension process would
    }

    override func tearDownWithError() throws {
        _ = try? sessions.revoke(for: vault.vaultID)
    }

    func provider(_ interaction: UserInteraction? = nil, sessions: KeyringSessions? = nil) -> CredentialProvider {
        CredentialProvider(vault: vault, interaction: interaction, sessions: sessions)
    }

    func assertCancelled(_ provider: CredentialProvider, _ code: ExtensionError.Code, file: StaticString = #filePath, line: UInt = #line) {
        guard case .cancelled(let error)? = provider.extensionContext.outcome else {
            return XCTFail("expected a cancellation, got \(String(describing: provider.extensionContext.outcome))", file: file, line: line)
        }
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
        XCTAssertFalse("\(error)".contains("S3cretPassword"), file: file, line: line)
    }

    func assertCompleted(_ provider: CredentialProvider, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(provider.extensionContext.outcome, .completed(PasswordCredential(user: "alice", password: "S3cretPassword")),
                       file: file, line: line)
    }

    func testLockedSilentPathAsksForInteractionAndReleasesNothing() {
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let provider = provider(interaction)
        provider.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(provider, .userInteractionRequired)
        XCTAssertEqual(interaction.passwordRequests, 0, "the silent path never prompts")
        XCTAssertFalse(vault.isUnlocked)
    }

    func testUnlockThenSilentSucceedsThenLockRefusesAgain() throws {
        try vault.unlock(masterPassword: Fixture.secret())
        let unlocked = provider()
        unlocked.provideCredentialWithoutUserInteraction(for: identity)
        assertCompleted(unlocked)
        vault.lock()
        let locked = provider()
        locked.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(locked, .userInteractionRequired)
    }

    func testKeyringSessionUnlocksAnotherInstanceUntilRevoked() throws {
        let owner = try Fixture.reopen(vault)
        try sessions.store(vaultKey: owner.keys().vaultKey, for: vault.vaultID, idleTimeout: 60)
        let viaSession = provider(sessions: sessions)
        viaSession.provideCredentialWithoutUserInteraction(for: identity)
        assertCompleted(viaSession)

        try sessions.revoke(for: vault.vaultID)
        vault = try Fixture.open(vault)
        let afterLock = provider(sessions: sessions)
        afterLock.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(afterLock, .userInteractionRequired)
        XCTAssertEqual(try sessions.status(for: vault.vaultID), .locked)
    }

    func testExpiredIdleTimeoutLocks() throws {
        let owner = try Fixture.reopen(vault)
        try sessions.store(vaultKey: owner.keys().vaultKey, for: vault.vaultID, idleTimeout: 1)
        guard case .unlocked = try sessions.status(for: vault.vaultID) else { return XCTFail("session not stored") }
        Thread.sleep(forTimeInterval: 2.2)  // the kernel expires the key; no clock of ours is involved
        let provider = provider(sessions: sessions)
        provider.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(provider, .userInteractionRequired)
    }

    func testInteractiveSuccessCancelAndWrongPasswords() {
        let success = provider(ScriptedInteraction(passwords: ["wrong", Fixture.password]))
        success.prepareInterfaceToProvideCredential(for: identity)
        assertCompleted(success)

        vault.lock()
        let cancelled = provider(ScriptedInteraction(passwords: [nil]))
        cancelled.prepareInterfaceToProvideCredential(for: identity)
        assertCancelled(cancelled, .userCanceled)

        let wrong = ScriptedInteraction(passwords: ["a", "b", "c", Fixture.password])
        let failing = provider(wrong)
        failing.prepareInterfaceToProvideCredential(for: identity)
        assertCancelled(failing, .failed)
        XCTAssertEqual(wrong.passwordRequests, 3)
        XCTAssertFalse(vault.isUnlocked)

        let nobody = provider(nil)
        nobody.prepareInterfaceToProvideCredential(for: identity)
        assertCancelled(nobody, .userInteractionRequired)
    }

    func testDeletedRecordIsCredentialIdentityNotFound() throws {
        try FileManager.default.removeItem(atPath: vault.container.recordPath(record.id))
        try vault.unlock(masterPassword: Fixture.secret())
        let provider = provider()
        provider.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(provider, .credentialIdentityNotFound)
    }

    func testIdentityTheRecordDoesNotListIsRefused() throws {
        try vault.unlock(masterPassword: Fixture.secret())
        let forged = PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: "bank.example", type: .domain), user: "alice",
            recordIdentifier: record.id.hex)
        try vault.identityStore.saveCredentialIdentities([forged])  // the index now claims more than the record
        let provider = provider()
        provider.provideCredentialWithoutUserInteraction(for: forged)
        assertCancelled(provider, .failed)
        let otherUser = self.provider()
        otherUser.provideCredentialWithoutUserInteraction(for: PasswordCredentialIdentity(
            serviceIdentifier: identity.serviceIdentifier, user: "mallory", recordIdentifier: record.id.hex))
        assertCancelled(otherUser, .failed)
    }

    func testRolledBackRecordIsRefused() throws {
        try vault.unlock(masterPassword: Fixture.secret())
        let path = vault.container.recordPath(record.id)
        let old = try Fixture.bytes(path)
        try vault.updateRecord(withID: record.id) { $0.password = "newer" }
        try Fixture.write(old, to: path)
        let provider = provider()
        provider.provideCredentialWithoutUserInteraction(for: identity)
        assertCancelled(provider, .failed)
    }

    func testConfigurationEnablesOnlyAfterAuthentication() throws {
        try vault.identityStore.disable()
        let cancelled = provider(ScriptedInteraction(passwords: [nil]))
        cancelled.prepareInterfaceForExtensionConfiguration()
        assertCancelled(cancelled, .userCanceled)
        XCTAssertFalse(vault.identityStore.state.isEnabled, "a cancelled check leaves the toggle off")

        let wrong = provider(ScriptedInteraction(passwords: ["x", "y", "z"]))
        wrong.prepareInterfaceForExtensionConfiguration()
        assertCancelled(wrong, .failed)
        XCTAssertFalse(vault.identityStore.state.isEnabled)

        let enabled = provider(ScriptedInteraction(passwords: [Fixture.password]))
        enabled.prepareInterfaceForExtensionConfiguration()
        XCTAssertEqual(enabled.extensionContext.outcome, .configurationCompleted)
        XCTAssertTrue(vault.identityStore.state.isEnabled)
    }

    func testCredentialListOffersMatchesAndHonoursTheChoice() throws {
        let vault2 = try Fixture.reopen(vault)
        try vault2.add(Fixture.draft("example.com", user: "bob", password: "BobPassword"))
        vault = try Fixture.open(vault)
        let chooser = ScriptedInteraction(passwords: [Fixture.password]) { identities in
            XCTAssertEqual(Set(identities.map(\.user)), ["alice", "bob"])
            return identities.first { $0.user == "bob" }
        }
        let provider = provider(chooser)
        provider.prepareCredentialList(for: [CredentialServiceIdentifier(identifier: "https://example.com/", type: .URL)])
        XCTAssertEqual(provider.extensionContext.outcome, .completed(PasswordCredential(user: "bob", password: "BobPassword")))

        let declined = self.provider(ScriptedInteraction(choice: { _ in nil }))
        declined.prepareCredentialList(for: [])
        assertCancelled(declined, .userCanceled)
    }

    func testAnswersOnlyOnce() {
        let context = CredentialProviderExtensionContext()
        context.completeRequest(withSelectedCredential: PasswordCredential(user: "a", password: "b"))
        context.cancelRequest(withError: ExtensionError(.failed))
        XCTAssertEqual(context.outcome, .completed(PasswordCredential(user: "a", password: "b")))
        XCTAssertFalse("\(PasswordCredential(user: "a", password: "hidden"))".contains("hidden"))
    }
}

final class AutoFillHostTests: XCTestCase {
    func testQuickTypeFlowLockedFlowAndNoMatch() throws {
        let owner = try Fixture.vault()
        try owner.add(Fixture.draft("example.com", user: "alice", password: "pw1"))
        let vault = try Fixture.open(owner)
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let host = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: interaction, sessions: nil))
        let request = [CredentialServiceIdentifier(identifier: "https://example.com/login", type: .URL)]

        XCTAssertEqual(host.fill(serviceIdentifiers: request, allowInteraction: false),
                       .cancelled(ExtensionError(.userInteractionRequired)))
        XCTAssertEqual(interaction.passwordRequests, 0)
        guard case .filled(let credential, _) = host.fill(serviceIdentifiers: request, allowInteraction: true) else {
            return XCTFail("interactive fill failed")
        }
        XCTAssertEqual(credential.password, "pw1")
        guard case .filled = host.fill(serviceIdentifiers: request, allowInteraction: false) else {
            return XCTFail("unlocked silent fill failed")
        }
        XCTAssertEqual(interaction.passwordRequests, 1, "unlocked: no second prompt")
        XCTAssertEqual(host.fill(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "other.org")], allowInteraction: true), .noMatch)
        XCTAssertEqual(host.fill(serviceIdentifiers: request, user: "nobody", allowInteraction: true), .noMatch)
    }

    func testDisabledStoreFallsBackToTheListWhenSomeoneIsThere() throws {
        let owner = try Fixture.vault()
        try owner.add(Fixture.draft("example.com", user: "alice", password: "pw1"))
        try owner.identityStore.disable()
        let vault = try Fixture.open(owner)
        let host = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: ScriptedInteraction(passwords: [Fixture.password]), sessions: nil))
        let request = [CredentialServiceIdentifier(parsing: "example.com")]
        guard case .cancelled(let error) = host.fill(serviceIdentifiers: request, allowInteraction: false) else { return XCTFail() }
        XCTAssertEqual(error.code, .userInteractionRequired)
        guard case .filled(let credential, _) = host.fill(serviceIdentifiers: request, allowInteraction: true) else { return XCTFail() }
        XCTAssertEqual(credential.user, "alice")
    }
}

/// iOS 18's one-time-code entry points: locked means locked, a code only for a login holding the
/// service, and an HOTP counter moves only when a code is really handed out.
final class OneTimeCodeProviderTests: XCTestCase {
    func testTheOneTimeCodePathKeepsTheProviderRules() throws {
        var vault = try Fixture.vault()
        let hotp = "otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0"  // RFC 4226's secret
        let record = try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)], user: "alice", password: "pw",
            otp: hotp))
        let store = vault.identityStore
        let found = try store.oneTimeCodeIdentities(for: [CredentialServiceIdentifier(parsing: "https://example.com/")])
        XCTAssertEqual(found.map(\.oneTimeCodeIdentity.label), ["alice"])
        XCTAssertEqual(try store.credentialIdentities(for: []).count, 1, "password identities only: the code is not a second login")
        let identity = found[0].oneTimeCodeIdentity

        vault = try Fixture.open(vault)  // locked, as a fresh extension process
        let locked = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        locked.provideCredentialWithoutUserInteraction(for: identity)
        guard case .cancelled(let error)? = locked.extensionContext.outcome else { return XCTFail("\(String(describing: locked.extensionContext.outcome))") }
        XCTAssertEqual(error.code, .userInteractionRequired)

        let interactive = CredentialProvider(vault: vault, interaction: ScriptedInteraction(passwords: [Fixture.password]), sessions: nil)
        interactive.prepareInterfaceToProvideCredential(for: identity)
        XCTAssertEqual(interactive.extensionContext.outcome, .completedOneTimeCode(OneTimeCodeCredential(code: "755224")))
        interactive.extensionContext.reset()
        interactive.prepareOneTimeCodeCredentialList(for: [CredentialServiceIdentifier(parsing: "example.com")])
        XCTAssertEqual(interactive.extensionContext.outcome, .completedOneTimeCode(OneTimeCodeCredential(code: "287082")), "counter 1 next")
        XCTAssertTrue(try vault.record(withID: record.id).otp?.contains("counter=2") == true)

        // An identity naming another service or user is refused (a tampered index), and the
        // counter does not move.
        for forged in [
            OneTimeCodeCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(parsing: "bank.example"), label: "alice", recordIdentifier: record.id.hex),
            OneTimeCodeCredentialIdentity(serviceIdentifier: identity.serviceIdentifier, label: "mallory", recordIdentifier: record.id.hex),
        ] {
            interactive.extensionContext.reset()
            interactive.provideCredentialWithoutUserInteraction(for: forged)
            guard case .cancelled(let error)? = interactive.extensionContext.outcome else { return XCTFail() }
            XCTAssertEqual(error.code, .failed)
        }
        XCTAssertTrue(try vault.record(withID: record.id).otp?.contains("counter=2") == true)
        XCTAssertTrue(vault.verify().isClean, "\(vault.verify().problems)")
    }
}
