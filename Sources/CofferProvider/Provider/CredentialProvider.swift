import CofferStore
import CofferFormat
import FoundationEssentials

/// Coffer's `ASCredentialProviderViewController`: the extension logic, with Apple's four entry
/// points and semantics (SPEC.md §8.2). It never hands out a password without user interaction
/// while the vault is locked, in this process and in the keyring.
///
/// Each entry point answers through `extensionContext` exactly once.
public final class CredentialProvider {
    public let vault: Vault
    public let extensionContext: CredentialProviderExtensionContext
    package let interaction: UserInteraction?
    /// How a locked vault becomes unlocked: its session, a team's owner, the interaction, three
    /// attempts (the one policy every host uses; the provider never sees a host).
    let unlockPolicy: UnlockPolicy
    var sessions: KeyringSessions? { unlockPolicy.sessions }
    /// Which sites share their accounts (Apple's shared-credentials data, SPEC.md §8.1.1): the
    /// list a person chooses from then offers a login saved for a sibling site too, labelled
    /// with that site. Asked only when a request reaches past a site's own logins; `nil`, or
    /// an answer of `nil`: only the requested sites' own logins.
    public var sharedCredentials: (() -> SharedCredentials?)?
    /// How many times a person may give the master password for one request (as sudo and
    /// gpg): the provider's, and every host's.
    public static let passwordAttempts = UnlockPolicy.passwordAttempts
    /// When the master password was last proven (shared with the host that made the policy): a
    /// passkey operation within the window is user-verified (SPEC.md §8.2.1).
    public var userVerification: UserVerificationClock { unlockPolicy.userVerification }
    /// Whether a relying party's report may read every record to find a hidden passkey (SPEC.md
    /// §8.2.2: hidden passkeys are in no index). A host that takes reports from web pages lets
    /// one do so at most once a minute, so that no page can keep it decrypting the vault.
    public var mayReadEveryRecord = true
    /// Whether the last report read every record.
    public internal(set) var didReadEveryRecord = false

    /// - Parameters:
    ///   - interaction: the user interface; `nil` when none is possible (then the interface
    ///     entry points cancel with `.userInteractionRequired`).
    ///   - sessions: where to look for an unlock session of another process; `nil` to rely on
    ///     this process's own unlock only. A provider made so unlocks this vault alone and
    ///     starts no session; a host passes its `UnlockPolicy` instead.
    public convenience init(
        vault: Vault, interaction: UserInteraction?, sessions: KeyringSessions? = KeyringSessions(),
        extensionContext: CredentialProviderExtensionContext = CredentialProviderExtensionContext()
    ) {
        let policy = UnlockPolicy(configuration: vault.configuration, sessions: sessions, interaction: interaction)
        policy.startsSessions = false
        self.init(vault: vault, interaction: interaction, unlockPolicy: policy, extensionContext: extensionContext)
    }

    /// A provider that unlocks through `unlockPolicy` (a host's: its sessions, its teams).
    public init(
        vault: Vault, interaction: UserInteraction?, unlockPolicy: UnlockPolicy,
        extensionContext: CredentialProviderExtensionContext = CredentialProviderExtensionContext()
    ) {
        self.vault = vault
        self.interaction = interaction
        self.unlockPolicy = unlockPolicy
        self.extensionContext = extensionContext
    }

    // MARK: Apple's entry points

    /// The silent path: provide the credential for `credentialIdentity` now, or cancel with
    /// `.userInteractionRequired` if the vault is locked. Never prompts.
    public func provideCredentialWithoutUserInteraction(for credentialIdentity: PasswordCredentialIdentity) {
        guard unlockFromSession() else {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
            return
        }
        provide(credentialIdentity)
    }

    /// The silent path for a one-time code (iOS 18): the same rule as for a password. An HOTP
    /// code moves the record's counter on, which is a write: it happens only unlocked too.
    public func provideCredentialWithoutUserInteraction(for credentialIdentity: OneTimeCodeCredentialIdentity) {
        guard unlockFromSession() else {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
            return
        }
        provide(credentialIdentity)
    }

    /// The interactive path for one identity: authenticate, then provide.
    public func prepareInterfaceToProvideCredential(for credentialIdentity: PasswordCredentialIdentity) {
        guard authenticate(reason: "to fill \(credentialIdentity.user) on \(credentialIdentity.serviceIdentifier)") else { return }
        provide(credentialIdentity)
    }

    /// The interactive path for one one-time-code identity.
    public func prepareInterfaceToProvideCredential(for credentialIdentity: OneTimeCodeCredentialIdentity) {
        guard authenticate(reason: "to fill the code for \(credentialIdentity.label) on \(credentialIdentity.serviceIdentifier)") else { return }
        provide(credentialIdentity)
    }

    /// The interactive list of one-time codes (iOS 18's `prepareOneTimeCodeCredentialList(for:)`):
    /// authenticate, let the user choose, provide the code.
    public func prepareOneTimeCodeCredentialList(for serviceIdentifiers: [CredentialServiceIdentifier]) {
        guard authenticate(reason: "to choose a one-time code") else { return }
        let candidates: [RankedIdentity]
        do {
            candidates = try vault.identityStore.oneTimeCodeIdentities(for: serviceIdentifiers)
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
            return
        }
        guard let interaction, let chosen = interaction.chooseIdentity(from: candidates),
              let picked = candidates.first(where: { $0.identity == chosen })
        else {
            extensionContext.cancelRequest(withError: ExtensionError(.userCanceled))
            return
        }
        provide(picked.oneTimeCodeIdentity)
    }

    /// The interactive list: authenticate, let the user choose among the identities for
    /// `serviceIdentifiers` (most specific first; an empty array offers everything), provide.
    public func prepareCredentialList(for serviceIdentifiers: [CredentialServiceIdentifier]) {
        guard authenticate(reason: "to choose a login") else { return }
        let candidates: [RankedIdentity]
        do {
            candidates = try vault.identityStore.credentialIdentities(
                for: serviceIdentifiers, minimumLevel: .sharedCredential, sharing: sharedCredentials?())
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
            return
        }
        guard let interaction, let chosen = interaction.chooseIdentity(from: candidates),
              candidates.contains(where: { $0.identity == chosen })
        else {
            extensionContext.cancelRequest(withError: ExtensionError(.userCanceled))
            return
        }
        provide(chosen)
    }

    /// Turning the provider on: requires successful authentication. Cancelling or failing
    /// leaves the provider and its identity store disabled (the configuration toggle tells the truth, SPEC.md §7.6).
    public func prepareInterfaceForExtensionConfiguration() {
        guard authenticate(reason: "to turn on AutoFill with Coffer") else {
            try? vault.identityStore.disable()
            return
        }
        do {
            try vault.identityStore.enable()
            extensionContext.completeExtensionConfigurationRequest()
        } catch {
            try? vault.identityStore.disable()
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
    }

    // MARK: Internals

    /// Whether the vault is unlocked, taking a live keyring session into account (a team's
    /// owner's too).
    func unlockFromSession() -> Bool {
        unlockPolicy.unlockFromSession(vault)
    }

    /// Asks for the master password, through the unlock policy, until it unlocks the vault;
    /// cancels the request otherwise.
    /// - Parameter proving: ask even when the vault is unlocked (a passkey's user verification).
    func authenticate(reason: String, proving: Bool = false) -> Bool {
        if !proving, unlockFromSession() { return true }
        guard interaction != nil, unlockPolicy.interaction != nil else {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, failureReason: "no user interface"))
            return false
        }
        do {
            switch try unlockPolicy.unlock(vault, reason: reason, proving: proving) {
            case .unlocked: return true
            case .noInteraction: extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
            case .cancelled: extensionContext.cancelRequest(withError: ExtensionError(.userCanceled))
            case .wrongPassword: extensionContext.cancelRequest(withError: ExtensionError.failed(VaultError.wrongPassword))
            }
        } catch {
            // e.g. a supplied password that was already wrong: "wrong master password"
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
        return false
    }

    /// Reads the identity's record (checked against the index), makes sure it really is the
    /// credential the identity claims, and completes the request.
    func provide(_ identity: PasswordCredentialIdentity) {
        guard let record = checkedRecord(identity.recordIdentifier, service: identity.serviceIdentifier, user: identity.user) else { return }
        vault.deviceState.recordUse(of: record.id, at: UInt64(Date().timeIntervalSince1970))
        extensionContext.completeRequest(withSelectedCredential: PasswordCredential(user: record.user, password: record.password))
    }

    /// The same for a one-time code: the record must be a login holding the service, the
    /// account and a code.
    func provide(_ identity: OneTimeCodeCredentialIdentity) {
        guard let record = checkedRecord(identity.recordIdentifier, service: identity.serviceIdentifier, user: identity.label) else { return }
        do {
            let code = try vault.oneTimeCode(forRecordWithID: record.id)
            vault.deviceState.recordUse(of: record.id, at: UInt64(Date().timeIntervalSince1970))
            extensionContext.completeOneTimeCodeRequest(using: OneTimeCodeCredential(code: code.code))
        } catch VaultError.locked {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
        }
    }

    /// The record an identity names, when it really is a login holding that service and user;
    /// otherwise the request is cancelled and `nil` returned.
    private func checkedRecord(_ recordIdentifier: String, service: CredentialServiceIdentifier, user: String) -> Record? {
        guard let id = try? RecordID(hex: recordIdentifier) else {
            extensionContext.cancelRequest(withError: ExtensionError(.credentialIdentityNotFound, failureReason: "not a record identifier"))
            return nil
        }
        let record: Record
        do {
            record = try vault.record(withID: id)
        } catch VaultError.recordNotFound {
            extensionContext.cancelRequest(withError: ExtensionError(.credentialIdentityNotFound, failureReason: "the record is gone"))
            return nil
        } catch VaultError.locked {
            extensionContext.cancelRequest(withError: ExtensionError(.userInteractionRequired, underlyingError: .locked))
            return nil
        } catch {
            extensionContext.cancelRequest(withError: ExtensionError.failed(error))
            return nil
        }
        // The index is what suggested this identity; the sealed record is the truth. An index
        // that names a service or user the record does not have, or offers another kind of item
        // to a form, was tampered with.
        guard record.kind == .login, record.serviceIdentifiers.contains(service), record.user == user else {
            extensionContext.cancelRequest(withError: ExtensionError(
                .failed, failureReason: "the index entry does not match record \(id) (tampered index); run 'coffer verify'"))
            return nil
        }
        return record
    }
}
