/// Plays the system's part between a login form and the provider, exactly as iOS does
/// (SPEC.md §8.3): suggestions from the identity store, the best one provided silently, and the
/// interactive path only when the provider asks for it and a user is there to answer.
///
/// It is also the one place that applies the provision rule (SPEC.md §8.1): a password is
/// released without a person choosing it only for a match at or above its record's mode
/// threshold (host level by default). A sibling on the same registrable domain, or a login of a
/// site that shares its accounts with this one (SPEC.md §8.1.1), is only a suggestion, as
/// QuickType only *shows* it: a person picks it, or nothing is filled.
///
/// `coffer fill`, the git and docker credential helpers, the browser host and the examples
/// are all this host.
import CofferProvider
public struct AutoFillHost {
    /// What a fill hands over: a password, or the one-time code of the same login. (A passkey is
    /// never filled: it signs a relying party's challenge, `CredentialProvider+Passkeys`.)
    public enum FillKind: Sendable {
        case password
        case oneTimeCode
    }

    public enum Result: Equatable, Sendable {
        case filled(PasswordCredential, identity: PasswordCredentialIdentity?)
        /// A one-time code (a fill of `kind: .oneTimeCode`).
        case filledCode(OneTimeCodeCredential, identity: OneTimeCodeCredentialIdentity?)
        case cancelled(ExtensionError)
        /// The identity store holds no identity for the service (and user).
        case noMatch
        /// Only suggestions a person must choose from (another host of the same site, a record
        /// whose mode asks for more), and nobody was there to choose.
        case choiceRequired([PasswordCredentialIdentity])
    }

    public let provider: CredentialProvider
    /// What the host's protocol adds to the matching (git and docker are stricter than a page).
    public let rules: ServiceMatchingRules

    public init(provider: CredentialProvider, rules: ServiceMatchingRules = .web) {
        self.provider = provider
        self.rules = rules
    }

    /// How far a fill looks: see `fill(serviceIdentifiers:user:allowInteraction:kind:reach:)`.
    public enum Reach: Sendable {
        /// The requested hosts' buckets only.
        case hosts
        /// The whole sites, when the hosts' buckets were asked already and filled nothing.
        case sites
        /// The hosts' buckets, then (nothing there) the whole sites.
        case hostsThenSites
    }

    /// Fills a login for `serviceIdentifiers` (most specific first), optionally for one `user`.
    ///
    /// First only the buckets of the requested hosts are read: a match there that the rule
    /// allows is provided silently (and interactively if the provider asks and a user is
    /// present). Otherwise the whole sites are read; a person present chooses among the
    /// suggestions through the provider's `UserInteraction`, and nobody present gets
    /// `.choiceRequired`.
    /// - Parameters:
    ///   - allowInteraction: whether a user is present (prompts and choices may run).
    ///   - kind: a password, or the one-time code of the same login (iOS 18's one-time-code
    ///     AutoFill), under the same rules.
    ///   - reach: how far to look. A host with several vaults asks each for the requested hosts
    ///     (`.hosts`: `.noMatch` when their buckets hold nothing the rule fills) before it asks
    ///     any for whole sites (`.sites`, which does not read those buckets twice).
    public func fill(
        serviceIdentifiers: [CredentialServiceIdentifier], user: String? = nil, allowInteraction: Bool, kind: FillKind = .password,
        reach: Reach = .hostsThenSites
    ) -> Result {
        let request = serviceIdentifiers.map(ServiceKey.init(parsing:))
        let suggestions: [RankedIdentity]
        do {
            if reach != .sites {
                let hostLevel = try candidates(request, user: user, minimumLevel: .host, sharing: nil, kind: kind)
                if let best = hostLevel.first(where: \.allowsAutomaticFill) { return provide(best, kind: kind, allowInteraction: allowInteraction) }
                if reach == .hosts { return .noMatch }
            }
            // Then the whole sites, and (on the web) the sites that share their accounts with them.
            let sharing = rules == .web && kind == .password ? provider.sharedCredentials?() : nil
            suggestions = try candidates(
                request, user: user, minimumLevel: sharing == nil ? .registrableDomain : .sharedCredential,
                sharing: sharing, kind: kind)
        } catch CredentialIdentityStoreError.storeDisabled {
            // No QuickType suggestions: the user opens the provider's list instead.
            guard allowInteraction else {
                return .cancelled(ExtensionError(.userInteractionRequired, failureReason: "the vault is locked and suggestions are off"))
            }
            let context = provider.extensionContext
            context.reset()
            switch kind {
            case .password: provider.prepareCredentialList(for: serviceIdentifiers)
            case .oneTimeCode: provider.prepareOneTimeCodeCredentialList(for: serviceIdentifiers)
            }
            return result(of: context, password: nil, code: nil)
        } catch {
            return .cancelled(ExtensionError.failed(error))
        }
        // A record of mode `site` may be filled for a sibling host without a choice.
        if let best = suggestions.first(where: \.allowsAutomaticFill) { return provide(best, kind: kind, allowInteraction: allowInteraction) }
        guard !suggestions.isEmpty else { return .noMatch }
        guard allowInteraction, let interaction = provider.interaction, interaction.canChooseIdentity else {
            return .choiceRequired(suggestions.map(\.identity))
        }
        guard let chosen = interaction.chooseIdentity(from: suggestions), let picked = suggestions.first(where: { $0.identity == chosen }) else {
            return .cancelled(ExtensionError(.userCanceled))
        }
        return provide(picked, kind: kind, allowInteraction: true)  // a person chose it: the rule is met
    }

    /// A person chose `identity` among the suggestions (a click in the browser's list): it is
    /// provided silently, or interactively when the provider asks and a user is present. The
    /// choice meets the provision rule; whether `identity` was offered is the host's to check.
    public func provide(chosen identity: PasswordCredentialIdentity, allowInteraction: Bool) -> Result {
        let context = silentThenInteractive(allowInteraction: allowInteraction,
                                            silent: { $0.provideCredentialWithoutUserInteraction(for: identity) },
                                            interactive: { $0.prepareInterfaceToProvideCredential(for: identity) })
        return result(of: context, password: identity, code: nil)
    }

    /// The store's identities for the request, for `user` if given, that this host's protocol
    /// admits.
    private func candidates(
        _ request: [ServiceKey], user: String?, minimumLevel: MatchLevel,
        sharing: SharedCredentials?, kind: FillKind
    ) throws -> [RankedIdentity] {
        let store = provider.vault.identityStore
        let found = switch kind {
        case .password: try store.credentialIdentities(matching: request, minimumLevel: minimumLevel, sharing: sharing)
        case .oneTimeCode: try store.oneTimeCodeIdentities(matching: request, minimumLevel: minimumLevel)
        }
        return found.filter { ranked in
            guard user == nil || ranked.identity.user == user else { return false }
            guard case .web = rules else {
                // A protocol's own rules apply to what may be handed out at all.
                guard let match = ranked.match, match.level >= .host else { return false }
                return rules.admits(ServiceKey(parsing: ranked.identity.serviceIdentifier), for: request[match.requestIndex])
            }
            return true
        }
    }

    /// The silent path, then the interactive one when the provider asks and a user is present.
    private func provide(_ ranked: RankedIdentity, kind: FillKind, allowInteraction: Bool) -> Result {
        let context = switch kind {
        case .password:
            silentThenInteractive(allowInteraction: allowInteraction,
                                  silent: { $0.provideCredentialWithoutUserInteraction(for: ranked.identity) },
                                  interactive: { $0.prepareInterfaceToProvideCredential(for: ranked.identity) })
        case .oneTimeCode:
            silentThenInteractive(allowInteraction: allowInteraction,
                                  silent: { $0.provideCredentialWithoutUserInteraction(for: ranked.oneTimeCodeIdentity) },
                                  interactive: { $0.prepareInterfaceToProvideCredential(for: ranked.oneTimeCodeIdentity) })
        }
        return result(of: context, password: ranked.identity, code: ranked.oneTimeCodeIdentity)
    }

    /// A person chose a passkey (a click in the browser's sheet): signed silently when the vault
    /// is unlocked and the relying party's verification wish is met, else through the provider's
    /// interface when a user is present — the same path as a chosen password. The outcome is the
    /// provider's: an assertion or a cancellation.
    public func provide(chosen request: PasskeyCredentialRequest, allowInteraction: Bool) -> CredentialProviderExtensionContext.Outcome? {
        silentThenInteractive(allowInteraction: allowInteraction,
                              silent: { $0.provideCredentialWithoutUserInteraction(for: request) },
                              interactive: { $0.prepareInterfaceToProvideCredential(for: request) }).outcome
    }

    /// What iOS does with one identity: `silent`, and when the provider answers
    /// `userInteractionRequired` and a user is present, `interactive`.
    private func silentThenInteractive(
        allowInteraction: Bool, silent: (CredentialProvider) -> Void, interactive: (CredentialProvider) -> Void
    ) -> CredentialProviderExtensionContext {
        let context = provider.extensionContext
        context.reset()
        silent(provider)
        if case .cancelled(let error)? = context.outcome, error.code == .userInteractionRequired, allowInteraction {
            context.reset()
            interactive(provider)
        }
        return context
    }

    private func result(
        of context: CredentialProviderExtensionContext, password: PasswordCredentialIdentity?, code: OneTimeCodeCredentialIdentity?
    ) -> Result {
        switch context.outcome {
        case .completed(let credential)?: .filled(credential, identity: password)
        case .completedOneTimeCode(let credential)?: .filledCode(credential, identity: code)
        case .cancelled(let error)?: .cancelled(error)
        case .configurationCompleted?, .completedPasskeyRegistration?, .completedPasskeyAssertion?, .completedTextToInsert?, nil:
            .cancelled(ExtensionError(.failed, failureReason: "the provider did not answer"))
        }
    }
}
