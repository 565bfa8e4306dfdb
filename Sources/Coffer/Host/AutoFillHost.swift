/// Plays the system's part between a login form and the provider, exactly as iOS does
/// (SPEC.md §7.3): suggestions from the identity store, the best one provided silently, and the
/// interactive path only when the provider asks for it and a user is there to answer.
///
/// `coffer fill`, the git credential helper and the examples are all this host.
public struct AutoFillHost {
    public enum Result: Equatable, Sendable {
        case filled(PasswordCredential, identity: PasswordCredentialIdentity?)
        case cancelled(ExtensionError)
        /// The identity store holds no identity for the service (and user).
        case noMatch
    }

    public let provider: CredentialProvider

    public init(provider: CredentialProvider) {
        self.provider = provider
    }

    /// Fills a login for `serviceIdentifiers` (most specific first), optionally for one `user`.
    /// - Parameter allowInteraction: whether the interactive path may run (a user is present).
    public func fill(
        serviceIdentifiers: [CredentialServiceIdentifier], user: String? = nil, allowInteraction: Bool
    ) -> Result {
        let context = provider.extensionContext
        let suggestions: [PasswordCredentialIdentity]
        do {
            suggestions = try provider.vault.identityStore.credentialIdentities(for: serviceIdentifiers)
                .map(\.identity).filter { user == nil || $0.user == user }
        } catch CredentialIdentityStoreError.storeDisabled {
            // No QuickType suggestions: the user opens the provider's list instead.
            guard allowInteraction else {
                return .cancelled(ExtensionError(.userInteractionRequired, failureReason: "the vault is locked and suggestions are off"))
            }
            context.reset()
            provider.prepareCredentialList(for: serviceIdentifiers)
            return result(of: context, identity: nil)
        } catch {
            return .cancelled(ExtensionError(.failed, failureReason: "\(error)"))
        }
        guard let best = suggestions.first else { return .noMatch }

        context.reset()
        provider.provideCredentialWithoutUserInteraction(for: best)
        if case .cancelled(let error)? = context.outcome, error.code == .userInteractionRequired, allowInteraction {
            context.reset()
            provider.prepareInterfaceToProvideCredential(for: best)
        }
        return result(of: context, identity: best)
    }

    private func result(of context: CredentialProviderExtensionContext, identity: PasswordCredentialIdentity?) -> Result {
        switch context.outcome {
        case .completed(let credential)?: .filled(credential, identity: identity)
        case .cancelled(let error)?: .cancelled(error)
        case .configurationCompleted?, nil: .cancelled(ExtensionError(.failed, failureReason: "the provider did not answer"))
        }
    }
}
