import CofferStore
import CofferFormat
import FoundationEssentials

/// The passkey forms of Apple's entry points (iOS 17; SPEC.md §8.2.1). The provider's rules hold
/// unchanged: nothing is signed while the vault is locked without the master password, and
/// nothing for a relying party other than the one the request names (the host checks that the
/// page belongs to it). The person's choice — a passkey picked, a registration accepted — is the
/// host's to obtain, as a click on a suggestion is for a password.
extension CredentialProvider {
    var isUserRecentlyVerified: Bool { userVerification.isRecent }

    /// A relying party that is no domain in canonical form — an IP address, a URL, upper case —
    /// is refused before anything is asked or signed (SPEC.md §6.4). - Returns: whether to go on.
    func acceptsRelyingParty(_ relyingParty: String) -> Bool {
        guard RelyingPartyIdentifier.isCanonical(relyingParty) else {
            extensionContext.cancelRequest(withError: ExtensionError(.failed, failureReason: "passkeys are for domains only, not '\(relyingParty.prefix(80))'"))
            return false
        }
        return true
    }

    /// The interactive list of a relying party's passkeys: authenticate, let the person choose
    /// among those `requestParameters` allow, sign.
    public func prepareCredentialList(
        for serviceIdentifiers: [CredentialServiceIdentifier], requestParameters: PasskeyCredentialRequestParameters
    ) {
        guard acceptsRelyingParty(requestParameters.relyingPartyIdentifier) else { return }
        guard authenticate(reason: "to sign in to \(requestParameters.relyingPartyIdentifier) with a passkey",
                           proving: requestParameters.userVerificationPreference == .required && !isUserRecentlyVerified)
        else { return }
        let candidates: [PasskeyCredentialIdentity]
        do {
            candidates = try vault.identityStore.passkeyIdentities(forRelyingParty: requestParameters.relyingPartyIdentifier).filter { identity in
                requestParameters.allowedCredentials.isEmpty || requestParameters.allowedCredentials.contains(identity.credentialID)
            }
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
            return
        }
        guard let interaction, let chosen = interaction.choosePasskey(from: candidates), candidates.contains(chosen) else {
            extensionContext.cancelRequest(withError: ExtensionError(.userCanceled))
            return
        }
        assert(PasskeyCredentialRequest(
            credentialIdentity: chosen, clientDataHash: requestParameters.clientDataHash,
            userVerificationPreference: requestParameters.userVerificationPreference))
    }

    /// The silent path for a passkey the person chose: signs when the vault is unlocked — and,
    /// when the relying party requires user verification, when the master password was proven
    /// within the window; otherwise cancels with `.userInteractionRequired`. Never prompts.
    public func provideCredentialWithoutUserInteraction(for request: PasskeyCredentialRequest) {
        guard unlockFromSession() else {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
            return
        }
        guard request.userVerificationPreference != .required || isUserRecentlyVerified else {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, failureReason: "user verification is required"))
            return
        }
        assert(request)
    }

    /// The interactive path for a chosen passkey: the master password when the vault is locked
    /// or user verification is required and not recent, then the signature.
    public func prepareInterfaceToProvideCredential(for request: PasskeyCredentialRequest) {
        let identity = request.credentialIdentity
        guard authenticate(reason: "to sign in to \(identity.relyingPartyIdentifier) as \(identity.userName) with a passkey",
                           proving: request.userVerificationPreference == .required && !isUserRecentlyVerified)
        else { return }
        assert(request)
    }

    /// A new passkey for `request`'s relying party and account — on that account's login when
    /// there is exactly one without a passkey, else a login of its own (`store`): the master
    /// password when locked (or when verification is required and not recent), the first
    /// algorithm of `supportedAlgorithms` Coffer has, 16 random bytes of credential id.
    public func prepareInterface(forPasskeyRegistration request: PasskeyCredentialRequest) {
        let identity = request.credentialIdentity
        guard acceptsRelyingParty(identity.relyingPartyIdentifier) else { return }
        guard let algorithm = request.supportedAlgorithms.first(where: PasskeyAlgorithm.allCases.contains) else {
            extensionContext.cancelRequest(withError: ExtensionError(.failed, failureReason: "none of the relying party's algorithms is ES256 or EdDSA"))
            return
        }
        guard Passkey.userHandleLengths.contains(identity.userHandle.count) else {
            extensionContext.cancelRequest(withError: ExtensionError(.failed, failureReason: "the user handle must be 1 to 64 bytes"))
            return
        }
        guard authenticate(reason: "to save a passkey for \(identity.relyingPartyIdentifier) in Coffer",
                           proving: request.userVerificationPreference == .required && !isUserRecentlyVerified)
        else { return }
        do {
            let existing = try vault.identityStore.passkeyIdentities(forRelyingParty: identity.relyingPartyIdentifier)
            guard !existing.contains(where: { request.excludedCredentials.contains($0.credentialID) }) else {
                extensionContext.cancelRequest(withError: ExtensionError(.matchedExcludedCredential))
                return
            }
            try register(request, algorithm: algorithm, userPresent: true) { passkey in try store(passkey) }
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
    }

    /// Makes the passkey `request` asks for, lets `place` store it, and completes the request
    /// with its attestation (`none`).
    func register(
        _ request: PasskeyCredentialRequest, algorithm: PasskeyAlgorithm, userPresent: Bool, place: (Passkey) throws -> Record
    ) throws {
        let identity = request.credentialIdentity
        let key = try PasskeyPrivateKey.generate(algorithm)
        let credentialID = try SecureRandom.bytes(16)
        let passkey = Passkey(
            credentialID: credentialID, relyingPartyIdentifier: identity.relyingPartyIdentifier, userHandle: identity.userHandle,
            userName: identity.userName, userDisplayName: request.userDisplayName, privateKey: try key.pkcs8(),
            created: RecordCoding.wholeSeconds(Date()))
        let record = try place(passkey)
        let authenticatorData = AuthenticatorData.encode(
            relyingPartyIdentifier: identity.relyingPartyIdentifier, userVerified: userPresent && isUserRecentlyVerified, signCount: 0,
            attested: (credentialID, key.cosePublicKey), userPresent: userPresent)
        extensionContext.completeRegistrationRequest(using: PasskeyRegistrationCredential(
            relyingParty: identity.relyingPartyIdentifier, clientDataHash: request.clientDataHash, credentialID: credentialID,
            attestationObject: AuthenticatorData.noneAttestationObject(authenticatorData: authenticatorData),
            recordIdentifier: record.id.hex, authenticatorData: authenticatorData, publicKey: key.subjectPublicKeyInfo,
            algorithm: algorithm))
    }

    /// Where a new passkey goes: onto the one login of that account on the relying party's own
    /// host that has none yet (a person who signed up with a password and now adds a passkey
    /// keeps one item, as Apple's Passwords and Bitwarden do), else into a login of its own.
    private func store(_ passkey: Passkey) throws -> Record {
        let site = CredentialServiceIdentifier(identifier: "https://\(passkey.relyingPartyIdentifier)/", type: .URL)
        let sameAccount = try vault.identityStore.credentialIdentities(for: [site], minimumLevel: .host)
            .filter { $0.identity.user == passkey.userName && !passkey.userName.isEmpty }
            .compactMap { try? RecordID(hex: $0.identity.recordIdentifier) }
            .uniqued(by: ==)
        if sameAccount.count == 1, try vault.record(withID: sameAccount[0]).passkey == nil {
            return try vault.updateRecord(withID: sameAccount[0]) { $0.passkey = passkey }
        }
        return try vault.add(RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: passkey.relyingPartyIdentifier, type: .domain)],
            user: passkey.userName, password: "", passkey: passkey))
    }

    /// Signs `request`'s challenge with the passkey its identity names, after checking the sealed
    /// record really holds that credential for that relying party (the index only suggested it).
    /// A counter that is not 0 (an imported passkey's) goes up by one per signature and is stored.
    private func assert(_ request: PasskeyCredentialRequest) {
        let identity = request.credentialIdentity
        do {
            let id = try RecordID(hex: identity.recordIdentifier)
            var record = try vault.record(withID: id)
            guard record.kind == .login, let passkey = record.passkey, passkey.credentialID == identity.credentialID,
                  passkey.relyingPartyIdentifier == identity.relyingPartyIdentifier
            else {
                extensionContext.cancelRequest(withError: ExtensionError(
                    .credentialIdentityNotFound, failureReason: "record \(id) holds no such passkey (tampered index?); run 'coffer verify'"))
                return
            }
            let key: PasskeyPrivateKey
            do { key = try PasskeyPrivateKey(pkcs8: passkey.privateKey) } catch {
                extensionContext.cancelRequest(withError: ExtensionError(.failed, failureReason: "the passkey's private key is unusable (\(error))"))
                return
            }
            var signCount: UInt32 = 0
            if passkey.signCount != 0 {
                signCount = passkey.signCount &+ 1
                record = try vault.updateRecord(withID: id) { $0.passkey?.signCount = signCount }
            }
            let authenticatorData = AuthenticatorData.encode(
                relyingPartyIdentifier: passkey.relyingPartyIdentifier, userVerified: isUserRecentlyVerified, signCount: signCount)
            let signature = try key.sign(authenticatorData + request.clientDataHash)
            vault.deviceState.recordUse(of: id, at: UInt64(Date().timeIntervalSince1970))
            extensionContext.completeAssertionRequest(using: PasskeyAssertionCredential(
                userHandle: passkey.userHandle, relyingParty: passkey.relyingPartyIdentifier, signature: signature,
                clientDataHash: request.clientDataHash, authenticatorData: authenticatorData, credentialID: passkey.credentialID))
        } catch VaultError.locked {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
        } catch VaultError.recordNotFound {
            extensionContext.cancelRequest(withError: ExtensionError(.credentialIdentityNotFound, failureReason: "the record is gone"))
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
    }
}
