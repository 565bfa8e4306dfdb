import CofferStore
import CofferFormat
import FoundationEssentials

/// Passkeys that keep up with the site (SPEC.md §8.2.2): the automatic upgrade of a password
/// login (iOS 18's conditional registration) and the relying parties' signals (iOS 26's reports,
/// the web's Signal API). None of these asks anything of the person, so none acts while the
/// vault is locked, and none deletes: a signal hides a passkey, restorable for 30 days.
extension CredentialProvider {
    /// A conditional registration (WebAuthn `mediation: "conditional"`): a passkey added to the
    /// login the person just signed in to with Coffer, without a sheet — only when all hold: the
    /// vault is open from the session, `request`'s `recordIdentifier` names a login (the one the
    /// host saw filled) whose user is the request's user name and that a host-level match of the
    /// relying party finds, that login has no passkey, and the relying party has no passkey of
    /// that account in the vault. Otherwise it is refused with `.failed` (the page gets
    /// `NotAllowedError`) and nothing is stored. The passkey is made without user presence or
    /// verification (both flags clear).
    public func performWithoutUserInteractionIfPossible(passkeyRegistration request: PasskeyCredentialRequest) {
        let identity = request.credentialIdentity
        guard acceptsRelyingParty(identity.relyingPartyIdentifier) else { return }
        func refuse(_ reason: String) { extensionContext.cancelRequest(withError: ExtensionError(.failed, failureReason: reason)) }
        guard unlockFromSession() else { return refuse("the vault is locked") }
        guard let algorithm = request.supportedAlgorithms.first(where: PasskeyAlgorithm.allCases.contains) else {
            return refuse("none of the relying party's algorithms is ES256 or EdDSA")
        }
        guard Passkey.userHandleLengths.contains(identity.userHandle.count), !identity.userName.isEmpty else {
            return refuse("a conditional registration names its account")
        }
        do {
            guard let id = try? RecordID(hex: identity.recordIdentifier) else { return refuse("no login was filled") }
            let login = try vault.record(withID: id)
            guard login.kind == .login, login.user == identity.userName else { return refuse("the filled login is not this account's") }
            guard login.passkey == nil else { return refuse("the login has a passkey already") }
            let site = CredentialServiceIdentifier(identifier: "https://\(identity.relyingPartyIdentifier)/", type: .URL)
            guard try vault.identityStore.credentialIdentities(for: [site], minimumLevel: .host)
                .contains(where: { $0.identity.recordIdentifier == login.id.hex })
            else { return refuse("the filled login is not for \(identity.relyingPartyIdentifier)") }
            let existing = try vault.identityStore.passkeyIdentities(forRelyingParty: identity.relyingPartyIdentifier)
            guard !existing.contains(where: { $0.userName == identity.userName || $0.userHandle == identity.userHandle }) else {
                return refuse("the account has a passkey already")
            }
            guard !existing.contains(where: { request.excludedCredentials.contains($0.credentialID) }) else {
                return refuse("the relying party excluded a passkey the vault holds")
            }
            try register(request, algorithm: algorithm, userPresent: false) { passkey in
                try vault.updateRecord(withID: login.id) { record in
                    guard record.passkey == nil else { throw VaultError.invalidInput("the login has a passkey already") }
                    record.passkey = passkey
                }
            }
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
    }

    /// The relying party does not know `credentialID` (`signalUnknownCredential`): that passkey is
    /// hidden. Dropped while locked.
    public func reportUnknownPublicKeyCredential(forRelyingParty relyingParty: String, credentialID: [UInt8]) {
        guard RelyingPartyIdentifier.isCanonical(relyingParty), unlockPolicy.unlockFromSession(vault, asUse: false) else { return }
        try? editPasskeys(of: relyingParty, includingHidden: false) { passkey, now in
            guard passkey.credentialID == credentialID, passkey.hidden == nil else { return false }
            passkey.hidden = PasskeyHiding(reason: .unknown, since: now)
            return true
        }
    }

    /// The relying party's complete list for one account (`signalAllAcceptedCredentials`): that
    /// account's passkeys not in it are hidden, hidden ones in it shown again. Dropped while locked.
    public func reportAllAcceptedPublicKeyCredentials(forRelyingParty relyingParty: String, userHandle: [UInt8], acceptedCredentialIDs: [[UInt8]]) {
        guard RelyingPartyIdentifier.isCanonical(relyingParty), unlockPolicy.unlockFromSession(vault, asUse: false) else { return }
        let accepted = Set(acceptedCredentialIDs)
        let visible = (try? vault.identityStore.passkeyIdentities(forRelyingParty: relyingParty)) ?? []
        // Hidden passkeys are in no index: the records are read only when the list names one
        // this device does not offer (a passkey to show again), and the host allows it.
        let mayUnhide = mayReadEveryRecord && !accepted.isSubset(of: Set(visible.map(\.credentialID)))
        try? editPasskeys(of: relyingParty, includingHidden: mayUnhide) { passkey, now in
            guard passkey.userHandle == userHandle else { return false }
            if accepted.contains(passkey.credentialID) {
                guard passkey.hidden != nil else { return false }
                passkey.hidden = nil
            } else {
                guard passkey.hidden == nil else { return false }
                passkey.hidden = PasskeyHiding(reason: .notAccepted, since: now)
            }
            return true
        }
    }

    /// The account's current names (`signalCurrentUserDetails`; Apple's `newName`): every passkey
    /// of that account takes them, the names it had kept in `formerNames`. Dropped while locked.
    public func reportPublicKeyCredentialUpdate(
        forRelyingParty relyingParty: String, userHandle: [UInt8], newName: String, newDisplayName: String? = nil
    ) {
        guard RelyingPartyIdentifier.isCanonical(relyingParty), !newName.isEmpty, unlockPolicy.unlockFromSession(vault, asUse: false) else { return }
        try? editPasskeys(of: relyingParty, includingHidden: false) { passkey, now in
            let displayName = newDisplayName ?? passkey.userDisplayName
            guard passkey.userHandle == userHandle, passkey.userName != newName || passkey.userDisplayName != displayName else { return false }
            passkey.formerNames.insert(PasskeyFormerName(userName: passkey.userName, userDisplayName: passkey.userDisplayName, replaced: now), at: 0)
            passkey.formerNames = Array(passkey.formerNames.prefix(PasskeyFormerName.maximumCount))
            passkey.userName = newName
            passkey.userDisplayName = displayName
            return true
        }
    }

    /// A site's report that the password of `userName` at `domain` is no longer used (the account
    /// signs in with a passkey): the logins a host-level match finds are marked for `coffer
    /// audit`, never changed otherwise. Dropped while locked.
    public func reportUnusedPasswordCredential(forDomain domain: String, userName: String) {
        guard unlockPolicy.unlockFromSession(vault, asUse: false) else { return }
        let site = CredentialServiceIdentifier(identifier: "https://\(domain)/", type: .URL)
        guard let identities = try? vault.identityStore.credentialIdentities(for: [site], minimumLevel: .host) else { return }
        let now = RecordCoding.wholeSeconds(Date())
        for id in Set(identities.filter { $0.identity.user == userName }.compactMap { try? RecordID(hex: $0.identity.recordIdentifier) }) {
            _ = try? vault.updateRecord(withID: id) { record in
                if record.passwordReportedUnused == nil, !record.password.isEmpty { record.passwordReportedUnused = now }
            }
        }
    }

    /// Applies `change` to each passkey of `relyingParty` (the offered ones; every record's when
    /// `includingHidden`) and stores those it changed. Hidden passkeys past their retention are
    /// removed on the way — the only deletion, 30 days after a signal hid them.
    private func editPasskeys(of relyingParty: String, includingHidden: Bool, _ change: (inout Passkey, Date) -> Bool) throws {
        let now = RecordCoding.wholeSeconds(Date())
        var ids = Set(try vault.identityStore.passkeyIdentities(forRelyingParty: relyingParty).compactMap { try? RecordID(hex: $0.recordIdentifier) })
        didReadEveryRecord = includingHidden
        if includingHidden {
            for record in try vault.allRecords() where record.passkey?.relyingPartyIdentifier == relyingParty { ids.insert(record.id) }
        }
        for id in ids {
            guard let record = try? vault.record(withID: id), var passkey = record.passkey, passkey.relyingPartyIdentifier == relyingParty else { continue }
            if let hidden = passkey.hidden, now.timeIntervalSince(hidden.since) > PasskeyHiding.retention {
                _ = try vault.updateRecord(withID: id) { $0.passkey = nil }
                continue
            }
            guard change(&passkey, now) else { continue }
            _ = try vault.updateRecord(withID: id) { record in
                guard record.passkey?.credentialID == passkey.credentialID else { return }
                record.passkey = passkey
            }
        }
    }
}
