import CofferProvider
import CofferHostKit

/// The passkey requests (SPEC.md §13.3): Coffer as the authenticator of the extension's WebAuthn
/// client. The service worker takes the origin from the browser and hashes the `clientDataJSON`
/// it built; the host checks the relying party against that origin, finds the passkeys, and lets
/// the provider sign — after the person's choice in the sheet, through pinentry when locked.
extension BrowserHost {
    /// WebAuthn §5.1.3 step 8 / §5.1.4.1 step 7: the rpId must be the origin's host or a domain
    /// above it that is not a public suffix, and the origin must be secure (https, or a
    /// localhost). Given in canonical form (lower case, A-labels), as browsers compare it.
    static func checkRelyingParty(_ rpId: String, for origin: BrowserOrigin) throws(BrowserHostError) {
        guard origin.isSecureContext else { throw .relyingParty("passkeys are only for https pages") }
        guard RelyingPartyIdentifier.isDomain(host: origin.host) else { throw .relyingParty("passkeys are only for pages of a domain, not of an IP address") }
        guard let host = HostNames.canonicalHost(origin.host), RelyingPartyIdentifier.isCanonical(rpId) else {
            throw .relyingParty("the relying party id is not a domain in canonical form")
        }
        let isParent = host.hasSuffix("." + rpId) && DomainNames.registrableDomain(ofCanonicalHost: rpId) != nil
        guard rpId == host || isParent else { throw .relyingParty("the relying party id \(rpId) is not this page's domain") }
    }

    func passkeyList(_ origin: BrowserOrigin, _ options: BrowserRequest.PasskeyOptions, unlock: Bool, in vault: Vault) throws -> JSONObject {
        try Self.checkRelyingParty(options.relyingPartyIdentifier, for: origin)
        if unlock, !vault.isUnlocked, !vault.identityStore.state.isEnabled {
            try self.unlock(vault, reason: "to sign in to \(options.relyingPartyIdentifier) with a passkey")
        }
        let found: [PasskeyCredentialIdentity]
        do {
            found = try offered(options, in: vault)
        } catch CredentialIdentityStoreError.storeDisabled {
            return ["passkeys": [], "locked": true, "suggestionsOff": true]
        }
        return ["passkeys": .array(found.map(Self.json)), "locked": .bool(!vault.isUnlocked)]
    }

    func passkeyGet(_ origin: BrowserOrigin, _ options: BrowserRequest.PasskeyOptions, chosen: RecordID, in vault: Vault) throws -> JSONObject {
        try Self.checkRelyingParty(options.relyingPartyIdentifier, for: origin)
        if !vault.isUnlocked && !vault.identityStore.state.isEnabled { try unlock(vault, reason: "to sign in to \(options.relyingPartyIdentifier)") }
        guard let identity = try offered(options, in: vault).first(where: { $0.recordIdentifier == chosen.hex }) else { throw BrowserHostError.notFound }
        let request = PasskeyCredentialRequest(
            credentialIdentity: identity, clientDataHash: options.clientDataHash, userVerificationPreference: options.userVerification)
        switch AutoFillHost(provider: session.provider(for: vault)).provide(chosen: request, allowInteraction: interaction != nil) {
        case .completedPasskeyAssertion(let assertion)?:
            return [
                "credentialId": .string(Base64.encodeURL(assertion.credentialID)),
                "authenticatorData": .string(Base64.encodeURL(assertion.authenticatorData)),
                "signature": .string(Base64.encodeURL(assertion.signature)), "userHandle": .string(Base64.encodeURL(assertion.userHandle)),
            ]
        case .cancelled(let error)?: throw BrowserHostError.from(error)
        default: throw BrowserHostError.failed("the provider did not answer")
        }
    }

    func passkeyCreate(
        _ origin: BrowserOrigin, _ options: BrowserRequest.PasskeyOptions, _ account: BrowserRequest.PasskeyAccount, in vault: Vault
    ) throws -> JSONObject {
        try Self.checkRelyingParty(options.relyingPartyIdentifier, for: origin)
        let algorithms = account.algorithms.compactMap(PasskeyAlgorithm.init(rawValue:))
        guard !algorithms.isEmpty else { throw BrowserHostError.unsupported("none of the relying party's algorithms is ES256 or EdDSA") }
        let provider = session.provider(for: vault)
        provider.extensionContext.reset()
        provider.prepareInterface(forPasskeyRegistration: Self.registration(options, account, onto: nil))
        switch provider.extensionContext.outcome {
        case .completedPasskeyRegistration(let registration)?: return Self.json(registration)
        case .cancelled(let error)?: throw BrowserHostError.from(error)
        default: throw BrowserHostError.failed("the provider did not answer")
        }
    }

    /// How long a notice's Undo can remove the passkey an upgrade made.
    static let undoWindow: Duration = .seconds(10 * 60)
    /// Signals taken per relying party per minute; more are dropped (a page cannot churn the vault).
    static let signalsPerMinute = 5

    /// An automatic passkey upgrade (SPEC.md §13.5.2): the provider's conditional registration,
    /// onto the login the service worker saw Coffer fill. Never prompts: while locked, or when
    /// any condition fails, it is refused (`forbidden`: the page's `NotAllowedError`).
    func passkeyUpgrade(
        _ origin: BrowserOrigin, _ options: BrowserRequest.PasskeyOptions, _ account: BrowserRequest.PasskeyAccount, login: RecordID, in vault: Vault
    ) throws -> JSONObject {
        try Self.checkRelyingParty(options.relyingPartyIdentifier, for: origin)
        let provider = session.provider(for: vault)
        provider.extensionContext.reset()
        provider.performWithoutUserInteractionIfPossible(passkeyRegistration: Self.registration(options, account, onto: login))
        switch provider.extensionContext.outcome {
        case .completedPasskeyRegistration(let registration)?:
            upgrades[registration.credentialID] = (login, .now)
            return Self.json(registration)
        case .cancelled(let error)?: throw BrowserHostError.forbidden(error.failureReason ?? "no upgrade")
        default: throw BrowserHostError.failed("the provider did not answer")
        }
    }

    /// The upgrade notice's Undo: removes the passkey only when this host made it by an upgrade
    /// within `undoWindow`, for this page's relying party, and the login still holds it.
    func passkeyUndo(_ origin: BrowserOrigin, _ id: RecordID, credentialID: [UInt8], in vault: Vault) throws -> JSONObject {
        guard let made = upgrades[credentialID], made.record == id, ContinuousClock.now - made.at < Self.undoWindow else { throw BrowserHostError.notFound }
        guard session.isUnlocked(vault) else { throw BrowserHostError.forbidden("the vault is locked") }
        let record = try vault.record(withID: id)
        guard let passkey = record.passkey, passkey.credentialID == credentialID else { throw BrowserHostError.notFound }
        try Self.checkRelyingParty(passkey.relyingPartyIdentifier, for: origin)
        _ = try vault.updateRecord(withID: id) { record in
            if record.passkey?.credentialID == credentialID { record.passkey = nil }
        }
        upgrades[credentialID] = nil
        return ["undone": true]
    }

    /// A relying party's signal (SPEC.md §13.5.3), handed to the provider's report of Apple's
    /// name. Checked as a sign-in's relying party is; dropped while locked and past the rate
    /// limit. The answer says nothing of what the vault holds.
    func passkeySignal(_ origin: BrowserOrigin, relyingParty: String, _ signal: BrowserRequest.PasskeySignal, in vault: Vault) throws -> JSONObject {
        try Self.checkRelyingParty(relyingParty, for: origin)
        let now = ContinuousClock.now
        let recent = (signals[relyingParty] ?? []).filter { now - $0 < .seconds(60) }
        guard recent.count < Self.signalsPerMinute else {
            signals[relyingParty] = recent
            return [:]
        }
        signals[relyingParty] = recent + [now]
        guard session.isUnlocked(vault) else { return [:] }
        let provider = session.provider(for: vault)
        switch signal {
        case .unknownCredential(let id):
            provider.reportUnknownPublicKeyCredential(forRelyingParty: relyingParty, credentialID: id)
        case .allAcceptedCredentials(let handle, let accepted):
            provider.mayReadEveryRecord = lastRecordScan.map { now - $0 >= .seconds(60) } ?? true
            provider.reportAllAcceptedPublicKeyCredentials(forRelyingParty: relyingParty, userHandle: handle, acceptedCredentialIDs: accepted)
            if provider.didReadEveryRecord { lastRecordScan = now }
        case .currentUserDetails(let handle, let name, let displayName):
            provider.reportPublicKeyCredentialUpdate(forRelyingParty: relyingParty, userHandle: handle, newName: name, newDisplayName: displayName)
        }
        return [:]
    }

    /// The provider's request for a registration the page asked for; `login`: an upgrade's.
    static func registration(
        _ options: BrowserRequest.PasskeyOptions, _ account: BrowserRequest.PasskeyAccount, onto login: RecordID?
    ) -> PasskeyCredentialRequest {
        PasskeyCredentialRequest(
            credentialIdentity: PasskeyCredentialIdentity(
                relyingPartyIdentifier: options.relyingPartyIdentifier, userName: account.userName, credentialID: [],
                userHandle: account.userHandle, recordIdentifier: login?.hex ?? ""),
            clientDataHash: options.clientDataHash, userVerificationPreference: options.userVerification,
            supportedAlgorithms: account.algorithms.compactMap(PasskeyAlgorithm.init(rawValue:)),
            excludedCredentials: options.credentials, userDisplayName: account.displayName)
    }

    /// A registration as the page's `create()` answer needs it.
    static func json(_ registration: PasskeyRegistrationCredential) -> JSONObject {
        [
            "credentialId": .string(Base64.encodeURL(registration.credentialID)),
            "attestationObject": .string(Base64.encodeURL(registration.attestationObject)),
            "authenticatorData": .string(Base64.encodeURL(registration.authenticatorData)),
            "publicKey": .string(Base64.encodeURL(registration.publicKey)), "publicKeyAlgorithm": .integer(Int64(registration.algorithm.rawValue)),
            "recordIdentifier": .string(registration.recordIdentifier),
        ]
    }

    /// The relying party's passkeys the request allows (all of them when it names none).
    private func offered(_ options: BrowserRequest.PasskeyOptions, in vault: Vault) throws -> [PasskeyCredentialIdentity] {
        try vault.identityStore.passkeyIdentities(forRelyingParty: options.relyingPartyIdentifier).filter { identity in
            options.credentials.isEmpty || options.credentials.contains(identity.credentialID)
        }
    }

    /// A passkey as the sheet shows it: never a key.
    static func json(_ identity: PasskeyCredentialIdentity) -> JSONValue {
        [
            "recordIdentifier": .string(identity.recordIdentifier), "userName": .string(identity.userName),
            "credentialId": .string(Base64.encodeURL(identity.credentialID)), "rpId": .string(identity.relyingPartyIdentifier),
        ]
    }
}
