import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Passkeys that keep up with the site (issue 56, SPEC.md §8.2.2): the conditional registration
/// and the relying parties' signals, at the provider's entry points of Apple's names.
final class PasskeyUpgradeTests: XCTestCase {
    let site = CredentialServiceIdentifier(parsing: "https://example.com/login")

    func upgrade(_ provider: CredentialProvider, login: String, user: String = "alice", handle: [UInt8] = [7], rp: String = "example.com") -> ExtensionError? {
        provider.extensionContext.reset()
        provider.performWithoutUserInteractionIfPossible(passkeyRegistration: PasskeyCredentialRequest(
            credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: rp, userName: user, credentialID: [], userHandle: handle, recordIdentifier: login),
            clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
        switch provider.extensionContext.outcome {
        case .completedPasskeyRegistration(let made)?:
            XCTAssertEqual(made.recordIdentifier, login)
            XCTAssertEqual(made.authenticatorData[32] & 0x05, 0, "a conditional registration sets neither UP nor UV")
            XCTAssertEqual(made.authenticatorData[32] & 0x58, 0x58, "still backup eligible, backed up, attested")
            return nil
        case .cancelled(let error)?: return error
        default:
            XCTFail("no outcome")
            return nil
        }
    }

    func testAnUpgradeJoinsTheFilledLoginOnlyWhenEveryConditionHolds() throws {
        let vault = try Fixture.vault()
        let login = try vault.add(RecordDraft(serviceIdentifiers: [site], user: "alice", password: "pw"))
        let other = try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://other.example.org/")], user: "alice", password: "pw"))
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)

        let locked = CredentialProvider(vault: try Fixture.open(vault), interaction: nil, sessions: nil)
        XCTAssertEqual(upgrade(locked, login: login.id.hex)?.code, .failed, "locked: refused, no prompt")
        XCTAssertEqual(upgrade(provider, login: "")?.code, .failed, "no login filled")
        XCTAssertEqual(upgrade(provider, login: login.id.hex, user: "bob")?.code, .failed, "another account")
        XCTAssertEqual(upgrade(provider, login: other.id.hex)?.code, .failed, "a login of another site")
        XCTAssertEqual(upgrade(provider, login: login.id.hex, rp: "10.0.0.1")?.code, .failed, "no domain")
        XCTAssertNil(try vault.record(withID: login.id).passkey, "nothing stored by a refusal")

        XCTAssertNil(upgrade(provider, login: login.id.hex))
        let joined = try vault.record(withID: login.id)
        XCTAssertEqual(joined.password, "pw", "the login keeps its password")
        XCTAssertEqual(joined.passkey?.userName, "alice")
        XCTAssertEqual(upgrade(provider, login: login.id.hex)?.code, .failed, "the login has a passkey: no second one")
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 1)
    }

    func testAnUpgradeIsRefusedWhenTheAccountHasAPasskeyElsewhere() throws {
        let vault = try Fixture.vault()
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
            credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "example.com", userName: "alice", credentialID: [], userHandle: [7], recordIdentifier: ""),
            clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
        let second = try vault.add(RecordDraft(serviceIdentifiers: [site], user: "alice", password: "pw2", name: "Second"))
        XCTAssertEqual(upgrade(provider, login: second.id.hex)?.code, .failed)
        XCTAssertNil(try vault.record(withID: second.id).passkey)
    }

    /// Three passkeys of one site: two of alice's (handle 7), one of bob's (handle 8).
    func threePasskeys() throws -> (Vault, CredentialProvider, [PasskeyCredentialIdentity]) {
        let vault = try Fixture.vault()
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        for (user, handle) in [("alice", [UInt8(7)]), ("alice-work", [7]), ("bob", [8])] {
            provider.extensionContext.reset()
            provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "example.com", userName: user, credentialID: [], userHandle: handle, recordIdentifier: ""),
                clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
        }
        let identities = try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").sorted { $0.userName < $1.userName }
        XCTAssertEqual(identities.map(\.userName), ["alice", "alice-work", "bob"])
        return (vault, provider, identities)
    }

    func record(_ vault: Vault, _ identity: PasskeyCredentialIdentity) throws -> Record { try vault.record(withID: RecordID(hex: identity.recordIdentifier)) }

    func testSignalsHideShowAndRenameButNeverDelete() throws {
        let (vault, provider, passkeys) = try threePasskeys()
        let (alice, work, bob) = (passkeys[0], passkeys[1], passkeys[2])

        // Unknown credential: hidden, not offered, still in the record; another site's id changes nothing.
        provider.reportUnknownPublicKeyCredential(forRelyingParty: "other.example", credentialID: alice.credentialID)
        XCTAssertNil(try record(vault, alice).passkey?.hidden)
        provider.reportUnknownPublicKeyCredential(forRelyingParty: "example.com", credentialID: alice.credentialID)
        XCTAssertEqual(try record(vault, alice).passkey?.hidden?.reason, .unknown)
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").map(\.userName).sorted(), ["alice-work", "bob"])

        // All accepted for alice's handle: the list names alice's first passkey only → it is shown
        // again, alice-work's is hidden, bob's (another handle) is untouched.
        provider.reportAllAcceptedPublicKeyCredentials(forRelyingParty: "example.com", userHandle: [7], acceptedCredentialIDs: [alice.credentialID])
        XCTAssertNil(try record(vault, alice).passkey?.hidden, "named in the list: shown again")
        XCTAssertEqual(try record(vault, work).passkey?.hidden?.reason, .notAccepted)
        XCTAssertNil(try record(vault, bob).passkey?.hidden)
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").map(\.userName).sorted(), ["alice", "bob"])

        // Current user details: bob's passkey renamed, the old names kept.
        provider.reportPublicKeyCredentialUpdate(forRelyingParty: "example.com", userHandle: [8], newName: "robert", newDisplayName: "Robert")
        let renamed = try XCTUnwrap(record(vault, bob).passkey)
        XCTAssertEqual(renamed.userName, "robert")
        XCTAssertEqual(renamed.userDisplayName, "Robert")
        XCTAssertEqual(renamed.formerNames.map(\.userName), ["bob"])

        // Locked: every signal is dropped.
        let locked = CredentialProvider(vault: try Fixture.open(vault), interaction: nil, sessions: nil)
        locked.reportUnknownPublicKeyCredential(forRelyingParty: "example.com", credentialID: bob.credentialID)
        XCTAssertNil(try record(vault, bob).passkey?.hidden)

        // Nothing was deleted: three records, three passkeys; the hidden one reads and round-trips.
        XCTAssertEqual(try vault.allRecords().compactMap(\.passkey).count, 3)
        let document = RecordCoding.document(try record(vault, work), omittingDefaults: true)
        XCTAssertEqual(try RecordCoding.decode(Array(JSONValue.object(document).canonicalText.utf8)).passkey, try record(vault, work).passkey)
    }

    func testAHiddenPasskeyIsRemovedOnlyAfterThirtyDays() throws {
        let (vault, provider, passkeys) = try threePasskeys()
        let work = passkeys[1]
        let id = try RecordID(hex: work.recordIdentifier)
        _ = try vault.updateRecord(withID: id) { $0.passkey?.hidden = PasskeyHiding(reason: .notAccepted, since: Date(timeIntervalSinceNow: -29 * 86_400)) }
        provider.reportAllAcceptedPublicKeyCredentials(forRelyingParty: "example.com", userHandle: [9], acceptedCredentialIDs: [[1, 2, 3]])
        XCTAssertNotNil(try vault.record(withID: id).passkey, "29 days: kept")
        _ = try vault.updateRecord(withID: id) { $0.passkey?.hidden = PasskeyHiding(reason: .notAccepted, since: Date(timeIntervalSinceNow: -31 * 86_400)) }
        provider.reportAllAcceptedPublicKeyCredentials(forRelyingParty: "example.com", userHandle: [9], acceptedCredentialIDs: [[1, 2, 3]])
        XCTAssertNil(try vault.record(withID: id).passkey, "31 days: removed")
        XCTAssertNoThrow(try vault.record(withID: id), "the login itself stays")
    }

    func testAReportedUnusedPasswordIsMarkedForAuditNotDeleted() throws {
        let vault = try Fixture.vault()
        let login = try vault.add(RecordDraft(serviceIdentifiers: [site], user: "alice", password: "pw"))
        let bob = try vault.add(RecordDraft(serviceIdentifiers: [site], user: "bob", password: "pw2"))
        CredentialProvider(vault: try Fixture.open(vault), interaction: nil, sessions: nil).reportUnusedPasswordCredential(forDomain: "example.com", userName: "alice")
        XCTAssertNil(try vault.record(withID: login.id).passwordReportedUnused, "locked: dropped")
        CredentialProvider(vault: vault, interaction: nil, sessions: nil).reportUnusedPasswordCredential(forDomain: "example.com", userName: "alice")
        let marked = try vault.record(withID: login.id)
        XCTAssertNotNil(marked.passwordReportedUnused)
        XCTAssertEqual(marked.password, "pw")
        XCTAssertNil(try vault.record(withID: bob.id).passwordReportedUnused)
        let audit = VaultAudit(try vault.allRecords())
        XCTAssertEqual(audit.findings.filter { $0.kind == .unused }.map(\.recordID), [login.id])
    }
}
