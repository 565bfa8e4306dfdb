import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferCrypto
@testable import CofferHostKit
import Foundation
import ScratchDirectories
import XCTest

/// Quick unlock through a TPM 2.0 (SPEC.md §8.6.1), against a real software TPM (`swtpm`) that
/// each test starts: the TPM seals the secret, checks the PIN and locks out after too many wrong
/// ones; a state copied to another machine's TPM opens nothing; the lifetime ends and the master
/// password renews it.
final class TPMQuickUnlockTests: XCTestCase {
    /// This test's TPM, started on first use (the vector test needs none).
    lazy var machine: SoftwareTPM = {
        guard let started = try? SoftwareTPM() else { fatalError("swtpm did not start") }
        return started
    }()
    var tpm: TPM { TPM(tcti: machine.tcti) }

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm") || name.contains("Reference") else {
            throw XCTSkip("swtpm is not installed (scripts/test installs it)")
        }
    }

    /// A vault with TPM quick unlock on (PIN "2468" unless `pin` is nil), opened again locked.
    func lockedVault(pin: String? = "2468", lifetime: TimeInterval = TPM.lifetime, now: Date = Date()) throws -> Vault {
        let created = try Fixture.vault()
        try created.enableTPMQuickUnlock(pin: pin.map { Fixture.secret($0) }, tpm: tpm, secrets: nil, lifetime: lifetime, now: now)
        return try Fixture.open(created)
    }

    func quickUnlockFile(_ vault: Vault) throws -> QuickUnlockFile {
        try QuickUnlockFile.decode(XCTUnwrap(vault.deviceState.read(vault.deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength)))
    }

    func testTheTPMUnsealsWithThePINAndCountsAWrongOne() throws {
        let vault = try lockedVault()
        guard case .available(.tpmWithPIN, 3, let expires?) = vault.quickUnlockState(secrets: nil) else {
            return XCTFail("\(vault.quickUnlockState(secrets: nil))")
        }
        XCTAssertEqual(expires.timeIntervalSinceNow, TPM.lifetime, accuracy: 60, "14 days unless told")
        XCTAssertFalse(try quickUnlockFile(vault).sealedObject.isEmpty)

        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("1357"), secrets: KeyringSessions(), tpm: tpm), .wrong(attemptsLeft: 2))
        XCTAssertFalse(vault.isUnlocked)
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unlocked)
        XCTAssertEqual(try quickUnlockFile(vault).attemptsLeft, 3, "a right PIN gives the attempts back")
        let id = try vault.add(Fixture.draft()).id
        XCTAssertEqual(try Fixture.reopen(vault).record(withID: id).password, "hunter2", "the key it unwrapped is the vault's")
    }

    func testAnAnswerOfAnotherLengthIsNeverSentToTheTPM() throws {
        let vault = try lockedVault()
        for _ in 0..<5 {
            XCTAssertEqual(try vault.unlock(pin: Fixture.secret(Fixture.password), secrets: KeyringSessions(), tpm: tpm), .wrong(attemptsLeft: 3))
        }
        // Five master passwords typed at the prompt cost the TPM no strike (it locks out at 3).
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unlocked)
    }

    func testTheTPMsLockoutIsToldAndTheMasterPasswordStillOpens() throws {
        let vault = try lockedVault()
        for left in [2, 1, 0] {
            XCTAssertEqual(try vault.unlock(pin: Fixture.secret("0000"), secrets: KeyringSessions(), tpm: tpm), .wrong(attemptsLeft: left))
            vault.settleQuickUnlock(passwordWasRight: false, secrets: KeyringSessions())
        }
        XCTAssertEqual(vault.quickUnlockState(secrets: nil), .off, "three wrong PINs destroy the wrapped key")

        // The TPM counted them too: now it refuses even the right PIN, and the try is not spent.
        try vault.unlock(masterPassword: Fixture.secret())
        try vault.enableTPMQuickUnlock(pin: Fixture.secret("2468"), tpm: tpm, secrets: nil)
        vault.lock()
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unavailable(.tpmLockedOut))
        XCTAssertEqual(try quickUnlockFile(vault).attemptsLeft, 3)
        try vault.unlock(masterPassword: Fixture.secret())
        vault.lock()

        // Its owner clears the lockout (tpm2-tools, the lockout hierarchy's empty authorization).
        XCTAssertEqual(try machine.tool("tpm2_dictionarylockout", ["--clear-lockout"]), 0)
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unlocked)
    }

    func testAStateCopiedToAnotherMachineOpensNothing() throws {
        let vault = try lockedVault()
        let otherMachine = try XCTUnwrap(SoftwareTPM())
        let elsewhere = TPM(tcti: otherMachine.tcti)
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: elsewhere), .unavailable(.otherTPM))
        XCTAssertEqual(try quickUnlockFile(vault).attemptsLeft, 3, "nothing judged, nothing spent")
        XCTAssertTrue(QuickUnlockEnd.otherTPM.description.contains("another machine's TPM"))
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: TPM(tcti: "device:/nonexistent/tpmrm0")),
                       .unavailable(.tpmUnavailable("no TPM 2.0 to use: /nonexistent/tpmrm0: No such file or directory")))
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unlocked, "its own TPM still opens it")
    }

    func testTheLifetimeEndsAndTheMasterPasswordRenewsIt() throws {
        let vault = try lockedVault(lifetime: 600, now: Date() - 900)
        XCTAssertEqual(vault.quickUnlockState(secrets: nil), .ended(.renewable))
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unavailable(.renewable))

        var notices: [String] = []
        let person = PromptRecorder(answers: [Fixture.password])
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: person, environment: ["COFFER_TPM_TCTI": machine.tcti])
        policy.quickUnlockNotice = { notices.append($0) }
        XCTAssertEqual(try policy.unlock(vault, reason: "a test"), .unlocked)
        XCTAssertEqual(person.prompts, ["master password"])
        XCTAssertTrue(notices.first?.contains("renews") == true, "\(notices)")
        guard case .available(.tpmWithPIN, 3, let expires?) = vault.quickUnlockState(secrets: nil) else {
            return XCTFail("renewed: \(vault.quickUnlockState(secrets: nil))")
        }
        XCTAssertEqual(expires.timeIntervalSinceNow, 600, accuracy: 60, "as long again as it was given")

        let again = try Fixture.open(vault)
        let pin = PromptRecorder(answers: ["2468"])
        let next = UnlockPolicy(configuration: again.configuration, sessions: nil, interaction: pin, environment: ["COFFER_TPM_TCTI": machine.tcti])
        XCTAssertEqual(try next.unlock(again, reason: "a test"), .unlocked)
        XCTAssertEqual(pin.prompts, ["PIN or master password"], "the same PIN, the TPM untouched")
    }

    func testWithoutAPINAnEmptyAnswerUnlocksAndAnyOtherIsTheMasterPassword() throws {
        let vault = try lockedVault(pin: nil)
        guard case .available(.tpm, _, _) = vault.quickUnlockState(secrets: nil) else { return XCTFail("\(vault.quickUnlockState(secrets: nil))") }
        XCTAssertEqual(try vault.unlock(pin: Fixture.secret("2468"), secrets: KeyringSessions(), tpm: tpm), .unavailable(nil), "no PIN to take")

        let environment: Environment = ["COFFER_TPM_TCTI": machine.tcti]
        let present = PromptRecorder(answers: [""])
        XCTAssertEqual(try UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: present, environment: environment).unlock(vault, reason: "a test"), .unlocked)
        XCTAssertEqual(present.prompts, ["TPM or master password"])

        let typed = try Fixture.open(vault)
        let password = PromptRecorder(answers: [Fixture.password])
        XCTAssertEqual(try UnlockPolicy(configuration: typed.configuration, sessions: nil, interaction: password, environment: environment).unlock(typed, reason: "a test"), .unlocked)

        // Nobody to ask (a request that must not prompt): locked means locked, TPM or not.
        let silent = try Fixture.open(vault)
        XCTAssertEqual(try UnlockPolicy(configuration: silent.configuration, sessions: nil, interaction: nil, environment: environment).unlock(silent, reason: "a test"), .noInteraction)
        XCTAssertFalse(silent.isUnlocked)
    }

    /// The desktop hosts' prompt (browser host, SSH agent, Secret Service): pinentry says the
    /// empty answer uses the TPM, and an empty answer does.
    func testPinentryOffersTheTPMForAnEmptyAnswer() throws {
        let vault = try lockedVault(pin: nil)
        let base = ScratchDirectories.make(prefix: "coffer-tpm-pinentry")
        try "\n".write(toFile: base + "/answers", atomically: true, encoding: .utf8)
        let environment: Environment = [
            "PATH": "/usr/bin:/bin", "SCRIPTED_PINENTRY_ANSWERS": base + "/answers", "SCRIPTED_PINENTRY_LOG": base + "/log", "COFFER_TPM_TCTI": machine.tcti,
        ]
        let interaction = PinentryInteraction(program: PinentryTests.script, environment: environment)
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: nil, interaction: interaction, environment: environment)
        XCTAssertEqual(try policy.unlock(vault, reason: "to fill alice on example.com"), .unlocked)
        let transcript = try String(contentsOfFile: base + "/log", encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC Unlock Coffer with this computer's TPM: leave the field empty"), transcript)
        XCTAssertEqual(transcript.components(separatedBy: "GETPIN").count, 2, "one prompt: \(transcript)")
    }

    func testTheFileAndItsWrappingMatchTheReference() throws {
        let vector = try VectorFile.load("primitives/quick_unlock_tpm.vector")
        XCTAssertEqual(TPMCommands.primaryTemplate, vector.hex("primarytemplate"))
        XCTAssertEqual(TPMCommands.sealedObjectTemplate, vector.hex("objecttemplate"))
        let bytes = vector.hex("file")
        let file = try QuickUnlockFile.decode(bytes)
        let vaultID = try VaultID(bytes: vector.hex("vaultid"))
        XCTAssertEqual(file.method, .tpmWithPIN)
        XCTAssertEqual(file.pinLength, 4)
        XCTAssertEqual(file.sealedObject, vector.hex("sealedobject"))
        XCTAssertEqual(file.encoded, bytes, "it writes back the same bytes")
        let wrapping = try Vault.wrappingKey(pin: nil, secret: SecureBytes(copying: vector.hex("unsealed")), file: file, vaultID: vaultID)
        XCTAssertEqual(wrapping.withUnsafeBytes { Array($0) }, vector.hex("wrapping"))
        let open = { (file: QuickUnlockFile) in
            try XChaCha20Poly1305.open(file.sealedKey[...], key: wrapping, nonce: file.nonce[...], associatedData: file.associatedData(vaultID: vaultID))
        }
        XCTAssertEqual(try open(file).withUnsafeBytes { Array($0) }, vector.hex("vaultkey"))

        // The counter and the times are outside the authenticated data (the master password
        // renews them); the sealed object and every other byte are inside it.
        var renewed = file
        renewed.attemptsLeft = 3
        renewed.created += 1000
        renewed.expires += 1000
        XCTAssertNoThrow(try open(QuickUnlockFile.decode(renewed.encoded)))
        for offset in [10, 28, 60, 88, 160, bytes.count - 1] {
            var changed = bytes
            changed[offset] ^= 0x01
            guard let decoded = try? QuickUnlockFile.decode(changed) else { continue }
            XCTAssertThrowsError(try open(decoded), "byte \(offset)")
        }
        for bad in [Array(bytes.dropLast()), bytes + [0], Array(bytes[..<160])] { XCTAssertThrowsError(try QuickUnlockFile.decode(bad)) }
        var noLength = bytes
        noLength[10] = 0
        XCTAssertThrowsError(try QuickUnlockFile.decode(noLength), "a TPM PIN has a length")
    }
}
