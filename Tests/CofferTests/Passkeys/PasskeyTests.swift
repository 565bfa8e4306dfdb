import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// The authenticator's pieces: CBOR, COSE keys, PKCS#8, authenticator data, the record member,
/// the index's passkey identities and the provider's passkey entry points (SPEC.md §6.4, §7.3, §8.2.1).
final class PasskeyTests: XCTestCase {
    // MARK: CBOR (RFC 8949 Appendix A, and CTAP2's canonical map order)

    func testCBOREncodingsOfRFC8949AppendixA() {
        let vectors: [(CBOR, String)] = [
            (.integer(0), "00"), (.integer(23), "17"), (.integer(24), "1818"), (.integer(100), "1864"), (.integer(1000), "1903e8"),
            (.integer(1_000_000), "1a000f4240"), (.integer(1_000_000_000_000), "1b000000e8d4a51000"), (.integer(-1), "20"),
            (.integer(-100), "3863"), (.integer(-1000), "3903e7"), (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
            (.text(""), "60"), (.text("a"), "6161"), (.text("IETF"), "6449455446"), (.text("\u{00fc}"), "62c3bc"),
            (.array([]), "80"), (.array([.integer(1), .array([.integer(2), .integer(3)])]), "8201820203"),
            (.map([]), "a0"), (.map([(.integer(1), .integer(2)), (.integer(3), .integer(4))]), "a201020304"),
        ]
        for (value, hex) in vectors { XCTAssertEqual(Hex.encode(value.encoded), hex) }
    }

    func testMapKeysAreOrderedByLengthThenBytes() {
        // CTAP2 canonical: 3 < -1 (0x20) by bytes; "fmt" (shorter) before "attStmt" before "authData".
        let map = CBOR.map([(.text("authData"), .integer(0)), (.integer(-1), .integer(0)), (.text("fmt"), .integer(0)), (.integer(3), .integer(0))])
        XCTAssertEqual(Hex.encode(map.encoded), "a4" + "0300" + "2000" + "63666d7400" + "68617574684461746100")
    }

    // MARK: Keys

    /// RFC 8032 §7.1 TEST 1: the COSE key carries the seed's public key.
    func testEd25519PKCS8AndCOSEKey() throws {
        let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
        let key = try PasskeyPrivateKey(pkcs8: PasskeyPrivateKey.ed25519PKCS8Prefix + seed)
        XCTAssertEqual(key.algorithm, .edDSA)
        XCTAssertEqual(Hex.encode(key.cosePublicKey.encoded),
                       "a4010103272006215820d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        XCTAssertEqual(try key.pkcs8(), PasskeyPrivateKey.ed25519PKCS8Prefix + seed)
        let signature = try key.sign(Array("abc".utf8))
        XCTAssertTrue(Ed25519SigningKey.isValidSignature(signature, of: Array("abc".utf8), publicKey: Array(key.subjectPublicKeyInfo.suffix(32))))
    }

    func testP256KeyRoundTripsThroughPKCS8AndSignsVerifiably() throws {
        let key = try PasskeyPrivateKey.generate(.es256)
        let reloaded = try PasskeyPrivateKey(pkcs8: key.pkcs8())
        XCTAssertEqual(reloaded.subjectPublicKeyInfo, key.subjectPublicKeyInfo)
        XCTAssertEqual(reloaded.algorithm, .es256)
        let message = Array("authenticator data ‖ client data hash".utf8)
        let signature = try reloaded.sign(message)
        XCTAssertTrue(P256SigningKey.isValidSignature(signature, of: message, subjectPublicKeyInfo: key.subjectPublicKeyInfo))
        XCTAssertFalse(P256SigningKey.isValidSignature(signature, of: message + [0], subjectPublicKeyInfo: key.subjectPublicKeyInfo))
        guard case .map(let pairs) = key.cosePublicKey else { return XCTFail("not a map") }
        XCTAssertEqual(pairs.count, 5)
        XCTAssertEqual(Array(key.cosePublicKey.encoded.prefix(10)), Hex.decode("a5010203262001215820")!)
    }

    /// A key whose public point is off the curve, a scalar of zero, another curve, trailing bytes
    /// or garbage: refused, nothing signed.
    func testKeysThatAreNotValidP256KeysAreRefused() throws {
        let good = try P256SigningKey.generate().pkcs8()
        var offCurve = good
        offCurve[offCurve.count - 1] ^= 0x01  // the stored public point's last byte of y
        var zeroScalar = good
        if let start = Self.range(of: [0x04, 0x20], in: zeroScalar) {
            for index in start + 2..<start + 34 { zeroScalar[index] = 0 }
        }
        for (name, bytes) in [("off the curve", offCurve), ("zero scalar", zeroScalar), ("trailing byte", good + [0]), ("garbage", [0x30, 0x03, 0x02, 0x01, 0x00])] {
            XCTAssertThrowsError(try PasskeyPrivateKey(pkcs8: bytes), name) { XCTAssertEqual($0 as? CryptoError, .invalidKey, name) }
        }
    }

    /// The PKCS#8 forms SPEC.md §6.4 lets a reader meet (other tools write them): an
    /// ECPrivateKey without its public key, and with the curve named inside it too, are the same
    /// key as the form Coffer writes.
    func testP256KeysWithOrWithoutTheirOptionalMembersAreTheSameKey() throws {
        let key = try P256SigningKey.generate()
        let written = try key.pkcs8()
        let start = try XCTUnwrap(Self.range(of: [0x04, 0x20], in: written))
        let scalar = Array(written[start + 2..<start + 34])
        let algorithm: [UInt8] = [0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let curveInside: [UInt8] = [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        func pkcs8(_ ecPrivateKeyTail: [UInt8]) -> [UInt8] {
            let ecPrivateKey = [0x02, 0x01, 0x01, 0x04, 0x20] + scalar + ecPrivateKeyTail
            let wrapped: [UInt8] = [0x04, UInt8(ecPrivateKey.count + 2), 0x30, UInt8(ecPrivateKey.count)] + ecPrivateKey
            let body: [UInt8] = [0x02, 0x01, 0x00] + algorithm + wrapped
            return [0x30, UInt8(body.count)] + body
        }
        for (name, der) in [("no public key", pkcs8([])), ("the curve named inside too", pkcs8(curveInside))] {
            let read = try PasskeyPrivateKey(pkcs8: der)
            XCTAssertEqual(read.subjectPublicKeyInfo, try PasskeyPrivateKey(pkcs8: written).subjectPublicKeyInfo, name)
        }
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        haystack.indices.first { haystack[$0...].starts(with: needle) }
    }

    func testAuthenticatorDataLayout() {
        let cose = CBOR.map([(.integer(1), .integer(1))])
        let data = AuthenticatorData.encode(relyingPartyIdentifier: "example.com", userVerified: true, signCount: 7, attested: ([9, 9], cose))
        XCTAssertEqual(Array(data.prefix(32)), SHA256Digest.hash(Array("example.com".utf8)))
        XCTAssertEqual(data[32], 0x01 | 0x04 | 0x08 | 0x10 | 0x40)
        XCTAssertEqual(Array(data[33..<37]), [0, 0, 0, 7])
        XCTAssertEqual(Array(data[37..<53]), AuthenticatorData.aaguid)
        XCTAssertEqual(Array(data[53...]), [0, 2, 9, 9] + cose.encoded)
        let assertion = AuthenticatorData.encode(relyingPartyIdentifier: "example.com", userVerified: false, signCount: 0)
        XCTAssertEqual(assertion.count, 37)
        XCTAssertEqual(assertion[32], 0x01 | 0x08 | 0x10)
        let attestation = AuthenticatorData.noneAttestationObject(authenticatorData: [1])
        XCTAssertEqual(Hex.encode(attestation), "a3" + "63666d74" + "646e6f6e65" + "6761747453746d74" + "a0" + "68617574684461746141" + "01")
    }

    // MARK: The record member

    func testPasskeyMemberRoundTripsAndIsStrict() throws {
        let passkey = Passkey(
            credentialID: Array(repeating: 7, count: 16), relyingPartyIdentifier: "example.com", userHandle: [1, 2, 3], userName: "alice",
            privateKey: PasskeyPrivateKey.ed25519PKCS8Prefix + Array(repeating: 1, count: 32), created: Date(timeIntervalSince1970: 1_700_000_000))
        let record = Record(
            id: try RecordID.random(), serviceIdentifiers: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)], user: "alice",
            password: "", created: passkey.created, modified: passkey.created, revision: 1, passkey: passkey)
        let bytes = try RecordCoding.encode(record)
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.contains(#""passkey":{"created":"2023-11-14T22:13:20Z","credentialId":"BwcHBwcHBwcHBwcHBwcHBw","key":"#), text)
        XCTAssertFalse(text.contains("counter"), "defaults are left out")
        XCTAssertEqual(try RecordCoding.decode(bytes), record)
        for (name, replacement) in [
            ("empty user handle", #""userHandle":"""#), ("user handle over 64 bytes", #""userHandle":"\#(Base64.encodeURL(Array(repeating: 1, count: 65)))""#),
            ("padded base64", #""userHandle":"AQID=""#), ("counter not a number", #""userHandle":"AQID","counter":"1""#),
        ] {
            let bad = text.replacingOccurrences(of: #""userHandle":"AQID""#, with: replacement)
            XCTAssertThrowsError(try RecordCoding.decode(Array(bad.utf8)), name)
        }
        let onNote = text.replacingOccurrences(of: #""id":"#, with: #""kind":"note","id":"#)
        XCTAssertThrowsError(try RecordCoding.decode(Array(onNote.utf8)), "a passkey on a note")
    }

    // MARK: The identity store and the provider

    func testPasskeyIdentitiesAreIndexedListedWhileLockedAndNeverFilled() throws {
        let vault = try Fixture.vault()
        try vault.identityStore.enable()
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        let record = try register(provider, rp: "example.com", user: "alice")
        let locked = try Fixture.open(vault)
        let identities = try locked.identityStore.passkeyIdentities(forRelyingParty: "example.com")
        XCTAssertEqual(identities.map(\.userName), ["alice"])
        XCTAssertEqual(identities.first?.recordIdentifier, record)
        XCTAssertEqual(identities.first?.userHandle, [0xAA, 0xBB])
        XCTAssertEqual(try locked.identityStore.passkeyIdentities(forRelyingParty: "login.example.com"), [], "an rpId is matched exactly")
        XCTAssertEqual(try locked.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)]).count, 0,
                       "a passkey-only login offers no password to fill")
        let listing = try locked.identityStore.identityListing()
        XCTAssertEqual(listing.rows.map(\.entry), [.passkey])
        // The journal and a rebuild keep it.
        try vault.rebuildIdentityIndex()
        XCTAssertEqual(try Fixture.open(vault).identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 1)
    }

    @discardableResult
    func register(_ provider: CredentialProvider, rp: String, user: String, algorithms: [PasskeyAlgorithm] = [.es256]) throws -> String {
        provider.extensionContext.reset()
        provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
            credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: rp, userName: user, credentialID: [], userHandle: [0xAA, 0xBB], recordIdentifier: ""),
            clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: algorithms))
        guard case .completedPasskeyRegistration(let registration)? = provider.extensionContext.outcome else {
            XCTFail("no registration: \(String(describing: provider.extensionContext.outcome))")
            return ""
        }
        XCTAssertEqual(registration.credentialID.count, 16)
        return registration.recordIdentifier
    }

    /// The provider refuses a relying party that is no domain before it asks anything.
    func testTheProviderRegistersNothingForAnIPAddress() throws {
        let vault = try Fixture.vault()
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let provider = CredentialProvider(vault: vault, interaction: interaction, sessions: nil)
        for rp in ["10.20.30.40", "30.40", "Example.com", "https://example.com"] {
            provider.extensionContext.reset()
            provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: rp, userName: "u", credentialID: [], userHandle: [1], recordIdentifier: ""),
                clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
            guard case .cancelled(let error)? = provider.extensionContext.outcome else { return XCTFail("\(rp) was registered") }
            XCTAssertEqual(error.code, .failed, rp)
        }
        XCTAssertEqual(try vault.allRecords().filter { $0.passkey != nil }.count, 0)
    }

    func testAssertionSignsOnlyUnlockedAndVerifiesAgainstTheRegisteredKey() throws {
        let vault = try Fixture.vault()
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let provider = CredentialProvider(vault: vault, interaction: interaction, sessions: nil)
        for algorithm in PasskeyAlgorithm.allCases {
            provider.extensionContext.reset()
            provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "\(algorithm.name.lowercased()).example", userName: "bob", credentialID: [],
                                                             userHandle: [1], recordIdentifier: ""),
                clientDataHash: Array(repeating: 2, count: 32), userVerificationPreference: .discouraged, supportedAlgorithms: [algorithm]))
            guard case .completedPasskeyRegistration(let registration)? = provider.extensionContext.outcome else { return XCTFail("\(algorithm)") }
            XCTAssertEqual(registration.algorithm, algorithm)
            let identity = try XCTUnwrap(vault.identityStore.passkeyIdentities(forRelyingParty: "\(algorithm.name.lowercased()).example").first)
            let request = PasskeyCredentialRequest(credentialIdentity: identity, clientDataHash: Array(repeating: 3, count: 32), userVerificationPreference: .preferred)

            // Locked: the silent path signs nothing.
            let locked = CredentialProvider(vault: try Fixture.open(vault), interaction: nil, sessions: nil)
            locked.provideCredentialWithoutUserInteraction(for: request)
            guard case .cancelled(let error)? = locked.extensionContext.outcome else { return XCTFail("signed while locked") }
            XCTAssertEqual(error.code, .userInteractionRequired)

            provider.extensionContext.reset()
            provider.provideCredentialWithoutUserInteraction(for: request)
            guard case .completedPasskeyAssertion(let assertion)? = provider.extensionContext.outcome else { return XCTFail("no assertion") }
            XCTAssertEqual(assertion.userHandle, [1])
            XCTAssertEqual(assertion.authenticatorData[32] & 0x04, 0, "unlocked, but no password proven to this provider: not UV")
            XCTAssertEqual(Array(assertion.authenticatorData[33..<37]), [0, 0, 0, 0], "Coffer's own passkeys keep counter 0")
            let message = assertion.authenticatorData + assertion.clientDataHash
            switch algorithm {
            case .es256: XCTAssertTrue(P256SigningKey.isValidSignature(assertion.signature, of: message, subjectPublicKeyInfo: registration.publicKey))
            case .edDSA: XCTAssertTrue(Ed25519SigningKey.isValidSignature(assertion.signature, of: message, publicKey: Array(registration.publicKey.suffix(32))))
            }
        }
        XCTAssertEqual(interaction.passwordRequests, 0, "the vault was unlocked: no prompt")
    }

    func testRegistrationRulesExcludedUnsupportedAndLockedWithoutInterface() throws {
        let vault = try Fixture.vault()
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        try register(provider, rp: "example.com", user: "alice")
        let existing = try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com")[0].credentialID
        func attempt(_ provider: CredentialProvider, excluded: [[UInt8]] = [], algorithms: [PasskeyAlgorithm] = [.es256]) -> ExtensionError.Code? {
            provider.extensionContext.reset()
            provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "example.com", userName: "alice", credentialID: [], userHandle: [1], recordIdentifier: ""),
                clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: algorithms, excludedCredentials: excluded))
            if case .cancelled(let error)? = provider.extensionContext.outcome { return error.code }
            return nil
        }
        XCTAssertEqual(attempt(provider, excluded: [existing]), .matchedExcludedCredential)
        XCTAssertEqual(attempt(provider, algorithms: []), .failed)
        XCTAssertEqual(attempt(CredentialProvider(vault: try Fixture.open(vault), interaction: nil, sessions: nil)), .userInteractionRequired)
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 1, "nothing stored by a refused registration")
    }

    func testRequiredVerificationAsksForThePasswordEvenWhenUnlocked() throws {
        let vault = try Fixture.vault()
        try register(CredentialProvider(vault: vault, interaction: nil, sessions: nil), rp: "example.com", user: "alice")
        let identity = try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com")[0]
        let request = PasskeyCredentialRequest(credentialIdentity: identity, clientDataHash: Array(repeating: 3, count: 32), userVerificationPreference: .required)
        let interaction = ScriptedInteraction(passwords: [Fixture.password])
        let provider = CredentialProvider(vault: vault, interaction: interaction, sessions: nil)
        provider.provideCredentialWithoutUserInteraction(for: request)
        guard case .cancelled(let error)? = provider.extensionContext.outcome, error.code == .userInteractionRequired else { return XCTFail("signed unverified") }
        provider.extensionContext.reset()
        provider.prepareInterfaceToProvideCredential(for: request)
        guard case .completedPasskeyAssertion(let assertion)? = provider.extensionContext.outcome else { return XCTFail("no assertion") }
        XCTAssertEqual(interaction.passwordRequests, 1)
        XCTAssertEqual(assertion.authenticatorData[32] & 0x04, 0x04)
    }

    /// An imported passkey with a counter goes on counting, stored with each signature.
    func testANonZeroCounterIncrementsAndIsStored() throws {
        let vault = try Fixture.vault()
        let key = try PasskeyPrivateKey.generate(.es256)
        let record = try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)], user: "carol", password: "",
            passkey: Passkey(credentialID: [5, 5, 5, 5], relyingPartyIdentifier: "example.com", userHandle: [9], userName: "carol",
                             privateKey: try key.pkcs8(), signCount: 41, created: Date())))
        let identity = try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com")[0]
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        provider.provideCredentialWithoutUserInteraction(for: PasskeyCredentialRequest(credentialIdentity: identity, clientDataHash: Array(repeating: 0, count: 32), userVerificationPreference: .discouraged))
        guard case .completedPasskeyAssertion(let assertion)? = provider.extensionContext.outcome else { return XCTFail("no assertion") }
        XCTAssertEqual(Array(assertion.authenticatorData[33..<37]), [0, 0, 0, 42])
        XCTAssertEqual(try vault.record(withID: record.id).passkey?.signCount, 42)
    }
}

/// `primitives/passkey.vector`, written by Tools/reference/passkey_reference.py from the SPEC with
/// Python's `cryptography` and PyNaCl and its own CBOR writer.
/// The rpId rule of SPEC.md §6.4, one place for every reader and writer (issue 51, item 2).
final class RelyingPartyIdentifierTests: XCTestCase {
    func testOnlyADomainInCanonicalFormIsAnRpId() {
        for good in ["example.com", "a.b.example.co.uk", "xn--bcher-kva.example", "localhost", "x1.example", "1x.example"] {
            XCTAssertTrue(RelyingPartyIdentifier.isCanonical(good), good)
        }
        for bad in ["", "Example.com", "example.com.", ".example.com", "a..b", "https://example.com", "example.com/login", "example.com:443",
                    "10.20.30.40", "30.40", "1.2.3", "[::1]", "::1", "-a.example", "a-.example", "bücher.example", "exa_mple.com",
                    String(repeating: "a", count: 64) + ".example", String(repeating: "a.", count: 127) + "aa"] {
            XCTAssertFalse(RelyingPartyIdentifier.isCanonical(bad), bad)
        }
        XCTAssertEqual(RelyingPartyIdentifier.canonical(from: "https://Login.Example.COM./path?x#y"), "login.example.com")
        XCTAssertEqual(RelyingPartyIdentifier.canonical(from: "https://user@example.com:8443/"), "example.com")
        XCTAssertEqual(RelyingPartyIdentifier.canonical(from: "Bücher.Example."), "xn--bcher-kva.example")
        XCTAssertNil(RelyingPartyIdentifier.canonical(from: "https://10.20.30.40/"))
        XCTAssertNil(RelyingPartyIdentifier.canonical(from: "[2001:db8::1]"))
        XCTAssertNil(RelyingPartyIdentifier.canonical(from: "30.40"))
    }

    /// A record whose passkey names no domain in canonical form is refused by the reader.
    func testTheRecordReaderRefusesAnRpIdOutOfCanonicalForm() throws {
        let key = try PasskeyPrivateKey.generate(.edDSA).pkcs8()
        for rpId in ["Example.com", "10.0.0.1", "https://example.com"] {
            let passkey = Passkey(credentialID: [1, 2, 3], relyingPartyIdentifier: rpId, userHandle: [1], userName: "u", userDisplayName: "",
                                  privateKey: key, created: Date(timeIntervalSince1970: 1_700_000_000))
            var record = Record(id: try RecordID.random(), serviceIdentifiers: [], user: "u", password: "", created: Date(timeIntervalSince1970: 0),
                                modified: Date(timeIntervalSince1970: 0), revision: 1)
            record.passkey = passkey
            let bytes = JSONValue.object(RecordCoding.document(record, omittingDefaults: true)).canonicalBytes
            XCTAssertThrowsError(try RecordCoding.decode(bytes), rpId)
        }
    }
}

final class PasskeyVectorTests: XCTestCase {
    func testTheReferencesKeysDataAndSignatures() throws {
        let file = try VectorFile.load("primitives/passkey.vector")
        func bytes(_ key: String) -> [UInt8] { Hex.decode(file.string(key)) ?? [] }
        let es256 = try PasskeyPrivateKey(pkcs8: bytes("es256_pkcs8"))
        XCTAssertEqual(es256.cosePublicKey.encoded, bytes("es256_cose"))
        XCTAssertEqual(es256.subjectPublicKeyInfo, bytes("es256_spki"))
        // The PKCS#8 forms a reader MUST accept are the same key; a stored public point of
        // another scalar is no key (SPEC.md §6.4).
        for form in ["es256_pkcs8_without_public_key", "es256_pkcs8_curve_inside"] {
            XCTAssertEqual(try PasskeyPrivateKey(pkcs8: bytes(form)).subjectPublicKeyInfo, bytes("es256_spki"), form)
        }
        XCTAssertThrowsError(try PasskeyPrivateKey(pkcs8: bytes("es256_pkcs8_wrong_public_key")))
        let registration = AuthenticatorData.encode(
            relyingPartyIdentifier: file.string("rp_id"), userVerified: false, signCount: 0, attested: (bytes("credential_id"), es256.cosePublicKey))
        XCTAssertEqual(registration, bytes("es256_registration_authenticator_data"))
        XCTAssertEqual(AuthenticatorData.noneAttestationObject(authenticatorData: registration), bytes("es256_attestation_object"))
        let assertion = AuthenticatorData.encode(relyingPartyIdentifier: file.string("rp_id"), userVerified: true, signCount: 0)
        XCTAssertEqual(assertion, bytes("assertion_authenticator_data"))
        let message = assertion + bytes("client_data_hash")
        XCTAssertTrue(P256SigningKey.isValidSignature(bytes("es256_signature"), of: message, subjectPublicKeyInfo: es256.subjectPublicKeyInfo))
        XCTAssertTrue(P256SigningKey.isValidSignature(try es256.sign(message), of: message, subjectPublicKeyInfo: bytes("es256_spki")))
        let eddsa = try PasskeyPrivateKey(pkcs8: bytes("eddsa_pkcs8"))
        XCTAssertEqual(eddsa.cosePublicKey.encoded, bytes("eddsa_cose"))
        XCTAssertEqual(try eddsa.sign(message), bytes("eddsa_signature"), "Ed25519 is deterministic: the same bytes")
        XCTAssertEqual(try eddsa.pkcs8(), bytes("eddsa_pkcs8"))
    }

    func testTheRecordMemberAndTheBucketRoundTripByteForByte() throws {
        let file = try VectorFile.load("primitives/passkey.vector")
        let json = Array(file.string("record_json").utf8)
        let record = try RecordCoding.decode(json)
        XCTAssertEqual(try RecordCoding.encode(record), json)
        XCTAssertEqual(record.passkey?.userHandle, [1, 2, 3])
        let bucket = Hex.decode(file.string("bucket"))!
        let entries = try IndexShardCoding.decodeBucket(bucket)
        XCTAssertEqual(IndexShardCoding.encode(entries, layout: .items), bucket, "the vector's bucket is of layout 3")
        guard case .identity(let identity)? = entries.first(where: { if case .identity = $0 { true } else { false } }) else { return XCTFail("no identity") }
        XCTAssertEqual(identity.kind, .passkey)
        XCTAssertEqual(identity.credentialID, Array(0..<16))
        XCTAssertEqual(identity.userHandle, [1, 2, 3])
        // What Coffer itself files for that record is that bucket's content.
        XCTAssertEqual(Vault.indexEntries(of: record).map(\.withoutDetails).sorted { BucketEntry.canonicalOrder($0, $1) }, entries)

        // After a relying party's signals (§8.2.2): hidden, renamed once, the password reported
        // unused — read and written byte for byte, and no passkey identity filed for it.
        let signalledJSON = Array(file.string("signalled_record_json").utf8)
        let signalled = try RecordCoding.decode(signalledJSON)
        XCTAssertEqual(try RecordCoding.encode(signalled), signalledJSON)
        XCTAssertEqual(signalled.passkey?.hidden, PasskeyHiding(reason: .unknown, since: try XCTUnwrap(UTCTimestamp.parse("2026-12-05T08:00:00Z"))))
        XCTAssertEqual(signalled.passkey?.formerNames.map(\.userName), ["alice@old.example"])
        XCTAssertEqual(signalled.passwordReportedUnused, UTCTimestamp.parse("2026-12-05T09:00:00Z"))
        XCTAssertFalse(Vault.indexEntries(of: signalled).contains { if case .identity(let entry) = $0 { entry.kind == .passkey } else { false } })
        // A reason SPEC.md does not name, or a former name without its date, is no passkey member.
        for bad in [#""reason":"unknown""# : #""reason":"deleted""#, #""replaced":"2026-12-05T07:00:00Z","#: ""] {
            let text = String(decoding: signalledJSON, as: UTF8.self).replacingOccurrences(of: bad.key, with: bad.value)
            XCTAssertThrowsError(try RecordCoding.decode(Array(text.utf8)), bad.value)
        }
    }
}

/// Where a registration stores its passkey (SPEC.md §8.2.1).
final class PasskeyPlacementTests: XCTestCase {
    func testAPasskeyJoinsItsAccountsOneLoginElseALoginOfItsOwn() throws {
        let vault = try Fixture.vault()
        let login = try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://example.com/login")], user: "alice", password: "pw"))
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        func register(_ user: String) throws -> String {
            provider.extensionContext.reset()
            provider.prepareInterface(forPasskeyRegistration: PasskeyCredentialRequest(
                credentialIdentity: PasskeyCredentialIdentity(relyingPartyIdentifier: "example.com", userName: user, credentialID: [], userHandle: [7], recordIdentifier: ""),
                clientDataHash: Array(repeating: 1, count: 32), userVerificationPreference: .preferred, supportedAlgorithms: [.es256]))
            guard case .completedPasskeyRegistration(let made)? = provider.extensionContext.outcome else { throw CryptoError.invalidKey }
            return made.recordIdentifier
        }
        XCTAssertEqual(try register("alice"), login.id.hex, "alice's password login gets the passkey")
        let joined = try vault.record(withID: login.id)
        XCTAssertEqual(joined.password, "pw")
        XCTAssertNotNil(joined.passkey)
        XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "https://example.com/login")]).count, 1,
                       "its password is still offered")
        XCTAssertNotEqual(try register("bob"), login.id.hex, "another account: a login of its own")
        XCTAssertNotEqual(try register("alice"), login.id.hex, "a second passkey for alice never replaces the first")
        XCTAssertNotNil(try vault.record(withID: login.id).passkey)
        XCTAssertEqual(try vault.identityStore.passkeyIdentities(forRelyingParty: "example.com").count, 3)
    }
}
