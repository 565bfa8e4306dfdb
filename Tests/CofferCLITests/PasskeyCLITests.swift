import Coffer
@testable import CofferCLI
import Foundation
import XCTest

/// Passkeys as a migrant and a user of the CLI meet them (SPEC.md §6.4): a Bitwarden JSON export
/// with a passkey imports with nothing dropped and signs; `list` and `show` name it and never
/// print its key; Coffer's own export carries it back in whole; `rm` deletes it.
final class PasskeyCLITests: XCTestCase {
    func unlocked(_ arguments: [String], _ cli: CLIHarness, stdin: String = "") -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n" + stdin)
    }

    func testABitwardenPasskeyImportsWholeAndSigns() throws {
        let cli = CLIHarness()
        cli.initVault()
        let key = try PasskeyPrivateKey.generate(.es256)
        let pkcs8 = Base64.encodeURL(try key.pkcs8())
        let json = cli.container + "-bw.json"
        try #"""
        {"encrypted":false,"folders":[],"items":[
         {"id":"1","folderId":null,"type":1,"reprompt":0,"name":"Example","notes":null,"favorite":false,
          "login":{"uris":[{"match":null,"uri":"https://passkeys.example.com/"}],"username":"alice","password":"","totp":null,
           "fido2Credentials":[{"credentialId":"6b6c1a8e-3f2d-4c7a-9a51-0c2f1d9e7b44","keyType":"public-key","keyAlgorithm":"ECDSA",
             "keyCurve":"P-256","keyValue":"KEY","rpId":"passkeys.example.com","userHandle":"dXNlci1oYW5kbGU","userName":"alice",
             "counter":"7","rpName":"Example","userDisplayName":"Alice","discoverable":"true","creationDate":"2024-05-01T10:00:00.000Z"}]},
          "collectionIds":null,"revisionDate":"2024-05-01T10:00:00.000Z","creationDate":"2024-05-01T10:00:00.000Z","deletedDate":null}]}
        """#.replacing("KEY", with: pkcs8).write(toFile: json, atomically: true, encoding: .utf8)
        let imported = unlocked(["import", json], cli)
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("login.fido2Credentials → passkey (1)"), imported.stderr)
        XCTAssertTrue(imported.stderr.contains("(1 with a passkey)"), imported.stderr)
        XCTAssertFalse(imported.stderr.contains("dropped"), imported.stderr)

        // Listed (while locked too) as a passkey; shown without its key.
        let listed = try JSONSerialization.jsonObject(with: Data(cli.run(["list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        XCTAssertEqual(listed.compactMap { $0["type"] as? String }, ["passkey"], "\(listed)")
        let shown = unlocked(["show", "Example"], cli)
        XCTAssertTrue(shown.stdout.contains("passkey: passkeys.example.com, alice, ES256"), shown.stdout)
        let shownJSON = unlocked(["show", "Example", "--json"], cli).stdout
        XCTAssertTrue(shownJSON.contains("\"credentialId\":\"a2wajj8tTHqaUQwvHZ57RA\""), shownJSON)
        XCTAssertFalse(shownJSON.contains(pkcs8) || shownJSON.contains("\"key\""), "show --json printed the private key")

        // The provider signs with it, and the counter goes on from Bitwarden's 7.
        let vault = try Vault.open(GroupContainer(path: cli.container), configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, stateDirectory: cli.environment["XDG_STATE_HOME"]! + "/coffer"))
        try vault.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))
        let identity = try XCTUnwrap(vault.identityStore.passkeyIdentities(forRelyingParty: "passkeys.example.com").first)
        XCTAssertEqual(identity.userHandle, Array("user-handle".utf8))
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        provider.provideCredentialWithoutUserInteraction(for: PasskeyCredentialRequest(
            credentialIdentity: identity, clientDataHash: Array(repeating: 9, count: 32), userVerificationPreference: .preferred))
        guard case .completedPasskeyAssertion(let assertion)? = provider.extensionContext.outcome else {
            return XCTFail("no assertion: \(String(describing: provider.extensionContext.outcome))")
        }
        XCTAssertEqual(Array(assertion.authenticatorData[33..<37]), [0, 0, 0, 8])
        XCTAssertTrue(P256SigningKey.isValidSignature(
            assertion.signature, of: assertion.authenticatorData + assertion.clientDataHash, subjectPublicKeyInfo: key.subjectPublicKeyInfo))

        // Coffer's own export writes the key, and an import of it keeps the passkey whole.
        let export = unlocked(["export", "--format", "json", "--plaintext"], cli)
        XCTAssertEqual(export.code, 0, export.stderr)
        XCTAssertTrue(export.stdout.contains(pkcs8), "the explicit export lost the key")
        let other = CLIHarness()
        other.initVault()
        let file = other.container + "-export.json"
        try export.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let again = unlocked(["import", file], other)
        XCTAssertEqual(again.code, 0, again.stderr)
        XCTAssertEqual(unlocked(["export", "--format", "json", "--plaintext"], other).stdout.contains(pkcs8), true)

        // rm deletes it, identity and all.
        XCTAssertEqual(unlocked(["rm", "Example", "--force"], cli).code, 0)
        XCTAssertEqual(try Vault.open(GroupContainer(path: cli.container), configuration: vault.configuration)
            .identityStore.passkeyIdentities(forRelyingParty: "passkeys.example.com").count, 0)
    }
}

/// A passkey made on one device signs on another after `coffer sync`, and no git object holds
/// its key, credential id or relying party in the clear.
final class PasskeySyncTests: SyncTestCase {
    func testAPasskeyMadeOnOneDeviceSignsOnTheOtherAfterSync() throws {
        let devices = devices(["B"])
        let (a, b) = (devices[0], devices[1])
        func vault(_ device: SyncDevice) throws -> Vault {
            let vault = try Vault.open(GroupContainer(path: device.container), configuration: VaultConfiguration(
                kdfPolicy: .relaxedForTesting, stateDirectory: device.harness.environment["XDG_STATE_HOME"]! + "/coffer"))
            try vault.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))
            return vault
        }
        let onA = CredentialProvider(vault: try vault(a), interaction: nil, sessions: nil)
        onA.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
            credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "rp.example", userName: "ann", credentialID: [], userHandle: [42],
                                                         recordIdentifier: ""),
            clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
        guard case .completedPasskeyRegistration(let registration)? = onA.extensionContext.outcome else { return XCTFail("no registration") }
        a.sync()
        b.sync()
        let vaultB = try vault(b)
        let identity = try XCTUnwrap(vaultB.identityStore.passkeyIdentities(forRelyingParty: "rp.example").first)
        XCTAssertEqual(identity.credentialID, registration.credentialID)
        let onB = CredentialProvider(vault: vaultB, interaction: nil, sessions: nil)
        onB.provideCredentialWithoutUserInteraction(for: PasskeyCredentialRequest(
            credentialIdentity: identity, clientDataHash: Array(repeating: 2, count: 32), userVerificationPreference: .preferred))
        guard case .completedPasskeyAssertion(let assertion)? = onB.extensionContext.outcome else { return XCTFail("device B did not sign") }
        XCTAssertTrue(P256SigningKey.isValidSignature(
            assertion.signature, of: assertion.authenticatorData + assertion.clientDataHash, subjectPublicKeyInfo: registration.publicKey))

        // What git holds: sealed files only.
        let record = try vaultB.record(withID: try RecordID(hex: identity.recordIdentifier))
        let objects = try runTool("/usr/bin/git", ["--git-dir", remote, "cat-file", "--batch-all-objects", "--batch"], environment: ["HOME": root])
        let text = objects.stdout
        for secret in [Base64.encodeURL(record.passkey!.privateKey), Base64.encodeURL(registration.credentialID), "rp.example"] {
            XCTAssertFalse(text.contains(secret), "a git object holds \(secret.prefix(12))…")
        }
    }
}
