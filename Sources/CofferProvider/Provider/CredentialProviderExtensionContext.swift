import CofferStore
import CofferFormat
import Synchronization

/// Apple's `ASCredentialProviderExtensionContext`: how the provider answers the host. Each
/// request ends exactly once, with a credential, a cancellation or a completed configuration.
public final class CredentialProviderExtensionContext: Sendable {
    /// How the request ended.
    public enum Outcome: Equatable, Sendable {
        case completed(PasswordCredential)
        case completedOneTimeCode(OneTimeCodeCredential)
        case completedPasskeyRegistration(PasskeyRegistrationCredential)
        case completedPasskeyAssertion(PasskeyAssertionCredential)
        case completedTextToInsert(String)
        case cancelled(ExtensionError)
        case configurationCompleted
    }

    private let state = Mutex<Outcome?>(nil)

    public init() {}

    /// The outcome, once the provider has answered.
    public var outcome: Outcome? { state.withLock { $0 } }

    public func completeRequest(withSelectedCredential credential: PasswordCredential) {
        finish(.completed(credential))
    }

    /// Apple's `completeOneTimeCodeRequest(using:)` (iOS 18).
    public func completeOneTimeCodeRequest(using credential: OneTimeCodeCredential) {
        finish(.completedOneTimeCode(credential))
    }

    /// Apple's `completeRegistrationRequest(using:)` (iOS 17): a new passkey.
    public func completeRegistrationRequest(using credential: PasskeyRegistrationCredential) {
        finish(.completedPasskeyRegistration(credential))
    }

    /// Apple's `completeAssertionRequest(using:)` (iOS 17): a signed passkey sign-in.
    public func completeAssertionRequest(using credential: PasskeyAssertionCredential) {
        finish(.completedPasskeyAssertion(credential))
    }

    /// Apple's `completeRequest(withTextToInsert:)` (iOS 18): the text a person chose to insert.
    public func completeRequest(withTextToInsert text: String) {
        finish(.completedTextToInsert(text))
    }

    /// Cancels with an `ExtensionError`; any other error is reported as `.failed`.
    public func cancelRequest(withError error: Error) {
        let extensionError = error as? ExtensionError ?? ExtensionError.failed(error)
        finish(.cancelled(extensionError))
    }

    public func completeExtensionConfigurationRequest() {
        finish(.configurationCompleted)
    }

    /// The first answer wins; a provider answering twice is a bug the host must not act on twice.
    private func finish(_ outcome: Outcome) {
        state.withLock { current in if current == nil { current = outcome } }
    }

    /// Clears the answer so the same context can carry the host's next request.
    public func reset() {
        state.withLock { $0 = nil }
    }
}
