import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferHostKit
import Foundation
import XCTest

/// Quick unlock with a PIN (SPEC.md §8.6), against the real kernel keyring: the PIN opens the
/// vault only with this device's secret, three wrong ones destroy the wrapped key, and what ends
/// it (a restart, a changed header, its lifetime) leaves the master password working.
final class QuickUnlockTests: XCTestCase {
    let secrets = KeyringSessions()
    var cleanup: [Vault] = []

    override func tearDown() {
        for vault in cleanup { try? vault.disableQuickUnlock(secrets: secrets) }
    }

    /// A vault with quick unlock on (PIN "2468"), opened again locked.
    func lockedVaultWithPIN(lifetime: TimeInterval? = nil, now: Date = Date()) throws -> Vault {
        let created = try Fixture.vault()
        try created.enableQuickUnlock(pin: Fixture.secret("2468"), secrets: secrets, lifetime: lifetime, now: now)
        cleanup.append(created)
        return try Fixture.open(created)
    }

    func attemptsOnDisk(_ vault: Vault) throws -> UInt8 {
        let bytes = try XCTUnwrap(vault.deviceState.read(vault.deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength))
        return try QuickUnlockFile.decode(bytes).attemptsLeft
    }

    func testThePINUnlocksAndARightPINGivesTheAttemptsBack() throws {
        let vault = try lockedVaultWithPIN()
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .available(method: .pin, attemptsLeft: 3, expires: nil))
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("1357"), secrets: secrets), .wrong(attemptsLeft: 2))
        XCTAssertEqual(try attemptsOnDisk(vault), 2, "a wrong PIN is counted on disk")
        XCTAssertFalse(vault.isUnlocked)
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unlocked)
        XCTAssertTrue(vault.isUnlocked)
        XCTAssertEqual(try attemptsOnDisk(vault), 3)
        // The key it unwrapped is the vault's: a record written under it reads back elsewhere.
        let id = try vault.add(Fixture.draft()).id
        XCTAssertEqual(try Fixture.reopen(vault).record(withID: id).password, "hunter2")
    }

    func testThreeWrongPINsDestroyTheWrappedKeyAndTheMasterPasswordStillOpens() throws {
        let vault = try lockedVaultWithPIN()
        for left in [2, 1, 0] {
            XCTAssertEqual(try vault.unlock(pin: Fixture.secret("0000"), secrets: secrets), .wrong(attemptsLeft: left))
            vault.settleQuickUnlock(passwordWasRight: false, secrets: secrets)
        }
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .off, "the wrapped key is gone")
        XCTAssertNil(try secrets.deviceSecret(for: vault.vaultID, containerTag: vault.deviceState.containerTag), "and the device secret")
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(nil), "the right PIN opens nothing now")
        try vault.unlock(masterPassword: Fixture.secret())
        XCTAssertTrue(vault.isUnlocked)
    }

    func testACounterAtZeroIsNeverTriedOnlyDestroyed() throws {
        // A process killed after counting its third wrong PIN leaves 0 on disk: nothing tries it.
        let vault = try lockedVaultWithPIN()
        let name = vault.deviceState.quickUnlockName
        var file = try QuickUnlockFile.decode(try XCTUnwrap(vault.deviceState.read(name, limit: QuickUnlockFile.maximumLength)))
        file.attemptsLeft = 0
        try vault.deviceState.write(file.encoded, to: name)
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(.tooManyAttempts))
        XCTAssertFalse(vault.isUnlocked)
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .off)
    }

    func testWithoutTheDeviceSecretACopiedStateOpensNothing() throws {
        // What a restart does, and what a copy of the device state on another machine meets.
        let vault = try lockedVaultWithPIN()
        try secrets.revokeDeviceSecret(for: vault.vaultID, containerTag: vault.deviceState.containerTag)
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .ended(.deviceSecretGone))
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(.deviceSecretGone))
        XCTAssertEqual(try attemptsOnDisk(vault), 3, "nothing was tried")
        XCTAssertTrue(QuickUnlockEnd.deviceSecretGone.description.contains("restart"))
    }

    func testAChangedHeaderOrAnElapsedLifetimeEndsIt() throws {
        let expired = try lockedVaultWithPIN(lifetime: 60, now: Date().addingTimeInterval(-120))
        XCTAssertEqual(expired.quickUnlockState(secrets: secrets), .ended(.expired))
        XCTAssertEqual(try expired.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(.expired))

        let vault = try lockedVaultWithPIN()
        try vault.unlock(masterPassword: Fixture.secret())
        try vault.changeMasterPassword(current: Fixture.secret(), new: Fixture.secret("a new master password"))
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .off, "passwd removes it")

        // A header changed elsewhere (a sync brought another device's passwd): the digest differs.
        let other = try lockedVaultWithPIN()
        let copy = try Vault.open(other.container, configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, fileSystem: .standard, stateDirectory: Fixture.containerPath("other-state")))
        try copy.unlock(masterPassword: Fixture.secret())
        try copy.changeMasterPassword(current: Fixture.secret(), new: Fixture.secret("changed elsewhere"))
        XCTAssertEqual(other.quickUnlockState(secrets: secrets), .ended(.headerChanged))
        XCTAssertEqual(try other.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(.headerChanged))
    }

    func testATamperedFileIsRefusedAndAnotherContainerHasNone() throws {
        let vault = try lockedVaultWithPIN()
        let name = vault.deviceState.quickUnlockName
        var bytes = try XCTUnwrap(vault.deviceState.read(name, limit: QuickUnlockFile.maximumLength))
        bytes[21] ^= 0x01  // the expiry: authenticated, so the key no longer opens
        try vault.deviceState.write(bytes, to: name)
        if case .unlocked = try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets) { XCTFail("a changed file opened") }
        XCTAssertFalse(vault.isUnlocked)

        bytes = Array(repeating: 0, count: 12)
        try vault.deviceState.write(bytes, to: name)
        XCTAssertEqual(vault.quickUnlockState(secrets: secrets), .ended(.unreadable))
    }

    /// The file and its keys as SPEC.md §8.6 defines them, made by the reference implementation
    /// (Tools/reference/generate_vectors.py).
    func testTheFileAndItsWrappingMatchTheReference() throws {
        let vector = try VectorFile.load("primitives/quick_unlock.vector")
        let fileBytes = vector.hex("file")
        let file = try QuickUnlockFile.decode(fileBytes)
        let vaultID = try VaultID(bytes: vector.hex("vaultid"))
        XCTAssertEqual(file.method, .pin)
        XCTAssertEqual(file.attemptsLeft, 2)
        XCTAssertEqual(file.created, UInt64(vector.int("created")))
        XCTAssertEqual(file.expires, UInt64(vector.int("expires")))
        XCTAssertEqual(file.headerDigest, try BLAKE2b.hash(vector.hex("header"), length: 32))
        XCTAssertEqual(file.parameters, KDFParameters(opsLimit: UInt32(vector.int("opslimit")), memLimit: UInt64(vector.int("memlimit"))))
        XCTAssertEqual(file.encoded, fileBytes, "it writes back the same bytes")

        let wrapping = try Vault.wrappingKey(
            pin: SecureBytes(copying: vector.hex("pin")), secret: SecureBytes(copying: vector.hex("devicesecret")), file: file, vaultID: vaultID)
        XCTAssertEqual(wrapping.withUnsafeBytes { Array($0) }, vector.hex("wrapping"))
        let opened = try XChaCha20Poly1305.open(file.sealedKey[...], key: wrapping, nonce: file.nonce[...], associatedData: file.associatedData(vaultID: vaultID))
        XCTAssertEqual(opened.withUnsafeBytes { Array($0) }, vector.hex("vaultkey"))

        // The counter is outside the authenticated data; every other byte is inside it.
        var counted = fileBytes
        counted[9] = 3
        XCTAssertNoThrow(try XChaCha20Poly1305.open(
            file.sealedKey[...], key: wrapping, nonce: file.nonce[...], associatedData: QuickUnlockFile.decode(counted).associatedData(vaultID: vaultID)))
        for offset in [8, 12, 20, 28, 60, 76, 80] {
            var changed = fileBytes
            changed[offset] ^= 0x01
            guard let decoded = try? QuickUnlockFile.decode(changed) else { continue }  // refused outright is fine too
            XCTAssertThrowsError(try XChaCha20Poly1305.open(
                decoded.sealedKey[...], key: wrapping, nonce: decoded.nonce[...], associatedData: decoded.associatedData(vaultID: vaultID)), "byte \(offset)")
        }
        for bad in [Array(fileBytes.dropLast()), fileBytes + [0]] { XCTAssertThrowsError(try QuickUnlockFile.decode(bad)) }
        var tooMany = fileBytes
        tooMany[9] = 4
        XCTAssertThrowsError(try QuickUnlockFile.decode(tooMany), "more than three attempts")
        var reserved = fileBytes
        reserved[10] = 1
        XCTAssertThrowsError(try QuickUnlockFile.decode(reserved))
        var method = fileBytes
        method[8] = 2
        XCTAssertThrowsError(try QuickUnlockFile.decode(method), "a method this version does not know")
    }

    // MARK: The policy every host follows

    func testThePolicyTakesThePINOrTheMasterPasswordInOnePrompt() throws {
        let vault = try lockedVaultWithPIN()
        let pin = PromptRecorder(answers: ["2468"])
        XCTAssertEqual(try UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: pin).unlock(vault, reason: "a test"), .unlocked)
        XCTAssertEqual(pin.prompts, ["PIN or master password"])

        // The master password typed where a PIN is accepted: unlocked, and no PIN attempt lost.
        let again = try Fixture.open(vault)
        let password = PromptRecorder(answers: [Fixture.password])
        XCTAssertEqual(try UnlockPolicy(configuration: again.configuration, sessions: nil, interaction: password).unlock(again, reason: "a test"), .unlocked)
        XCTAssertEqual(try attemptsOnDisk(again), 3)

        // Three wrong answers: the PIN's attempts are spent with the password's, and it ends.
        let third = try Fixture.open(vault)
        let wrong = PromptRecorder(answers: ["1", "2", "3"])
        var notices: [String] = []
        let policy = UnlockPolicy(configuration: third.configuration, sessions: nil, interaction: wrong)
        policy.quickUnlockNotice = { notices.append($0) }
        XCTAssertEqual(try policy.unlock(third, reason: "a test"), .wrongPassword)
        XCTAssertEqual(third.quickUnlockState(secrets: secrets), .off)
        XCTAssertTrue(notices.contains { $0.contains("three wrong PINs") }, "\(notices)")
    }

    func testASuppliedPasswordIsNeverTriedAsAPINAndEnablingProvesThePassword() throws {
        let vault = try lockedVaultWithPIN()
        let script = PromptRecorder(answers: ["2468"], suppliesPassword: true)
        XCTAssertEqual(try UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: script).unlock(vault, reason: "a test"), .cancelled)
        XCTAssertEqual(script.prompts, ["master password", "master password"], "a wrong password, then nothing more to give")
        XCTAssertEqual(try attemptsOnDisk(vault), 3, "the script's line was never a PIN")

        let proving = PromptRecorder(answers: ["2468"])
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: proving)
        policy.allowsQuickUnlock = false
        XCTAssertEqual(try policy.unlock(vault, reason: "a test", proving: true), .cancelled)
        XCTAssertEqual(proving.prompts, ["master password", "master password"], "enabling takes the master password only")
    }

    func testTheSystemsYesUnlocksWithoutAPromptAndItsNoLeavesTheMasterPassword() throws {
        let created = try Fixture.vault()
        try created.enableSystemQuickUnlock(secrets: secrets)
        cleanup.append(created)
        let vault = try Fixture.open(created)
        guard case .available(.system, _, nil) = vault.quickUnlockState(secrets: secrets) else { return XCTFail("\(vault.quickUnlockState(secrets: secrets))") }
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: secrets), .unavailable(nil), "no PIN opens a system unlock")

        let nobodyAsked = PromptRecorder(answers: [])
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: nobodyAsked)
        let yes = AnsweringSystem(.authorized)
        policy.systemAuthenticator = yes
        XCTAssertEqual(try policy.unlock(vault, reason: "a test"), .unlocked)
        XCTAssertEqual(yes.asked, 1)
        XCTAssertEqual(nobodyAsked.prompts, [], "no prompt of Coffer's")

        for answer in [SystemAuthentication.denied, .unavailable("no agent")] {
            let again = try Fixture.open(vault)
            let person = PromptRecorder(answers: [Fixture.password])
            let refusing = UnlockPolicy(configuration: again.configuration, sessions: nil, interaction: person)
            refusing.systemAuthenticator = AnsweringSystem(answer)
            var notices: [String] = []
            refusing.quickUnlockNotice = { notices.append($0) }
            XCTAssertEqual(try refusing.unlock(again, reason: "a test"), .unlocked)
            XCTAssertEqual(person.prompts, ["master password"], "the master password, never a PIN prompt")
            XCTAssertEqual(notices.count, 1, "\(notices)")
        }

        // Without an authenticator (the git helper), nothing is asked of the system.
        let helper = try Fixture.open(vault)
        let typed = PromptRecorder(answers: [Fixture.password])
        XCTAssertEqual(try UnlockPolicy(configuration: helper.configuration, sessions: nil, interaction: typed).unlock(helper, reason: "a test"), .unlocked)
        XCTAssertEqual(typed.prompts, ["master password"])
    }

    func testPinentryAsksForThePINOrTheMasterPassword() throws {
        let vault = try lockedVaultWithPIN()
        let base = Fixture.containerPath("pinentry")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        try "2468".write(toFile: base + "/answers", atomically: true, encoding: .utf8)
        let environment: Environment = ["PATH": "/usr/bin:/bin", "SCRIPTED_PINENTRY_ANSWERS": base + "/answers", "SCRIPTED_PINENTRY_LOG": base + "/log"]
        let interaction = PinentryInteraction(program: PinentryTests.script, environment: environment)
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: interaction)
        XCTAssertEqual(try policy.unlock(vault, reason: "to fill alice on example.com"), .unlocked)
        let transcript = try String(contentsOfFile: base + "/log", encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC PIN for Coffer (or the master password), to fill alice on example.com."), transcript)
        XCTAssertTrue(transcript.contains("SETPROMPT PIN:"), transcript)
    }
}

/// A person answering prompts in order, noting which prompt each was.
final class PromptRecorder: UserInteraction {
    var answers: [String]
    let suppliesPassword: Bool
    private(set) var prompts: [String] = []

    init(answers: [String], suppliesPassword: Bool = false) {
        self.answers = answers
        self.suppliesPassword = suppliesPassword
    }

    func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        prompts.append("master password")
        return answers.isEmpty ? nil : Fixture.secret(answers.removeFirst())
    }

    func requestPINOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        prompts.append("PIN or master password")
        return answers.isEmpty ? nil : Fixture.secret(answers.removeFirst())
    }

    func requestTPMOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        prompts.append("TPM or master password")
        return answers.isEmpty ? nil : Fixture.secret(answers.removeFirst())
    }

    func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity? { nil }
}

/// The system's answer, given: the real polkit is asked in SystemAuthenticationTests.
final class AnsweringSystem: SystemAuthenticator {
    let answer: SystemAuthentication
    private(set) var asked = 0
    init(_ answer: SystemAuthentication) { self.answer = answer }
    func authenticate(reason: String) -> SystemAuthentication {
        asked += 1
        return answer
    }
}
