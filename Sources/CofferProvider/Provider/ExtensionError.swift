import CofferStore
import CofferFormat
/// Apple's `ASExtensionError`: why a provider cancelled a request. Raw values are Apple's.
public struct ExtensionError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Int, Sendable {
        case failed = 0
        case userCanceled = 1
        /// The silent path cannot proceed (the vault is locked); the host should call
        /// `prepareInterfaceToProvideCredential(for:)`.
        case userInteractionRequired = 100
        case credentialIdentityNotFound = 101
        /// A registration for an account the vault already holds a passkey of (iOS 18): the
        /// relying party's `excludeCredentials` named it.
        case matchedExcludedCredential = 102
    }

    public let code: Code
    /// Apple's `NSLocalizedFailureReasonErrorKey`: what went wrong, never a secret.
    public let failureReason: String?
    /// Apple's `NSUnderlyingErrorKey`: the vault error behind a `.failed`, so a host can tell a
    /// tampered file from a full disk without reading the message. (A concrete type, not
    /// `any Error`: an existential here made every fill instantiate generic metadata at run time.)
    public let underlyingError: VaultError?

    public init(_ code: Code, failureReason: String? = nil, underlyingError: VaultError? = nil) {
        self.code = code
        self.failureReason = failureReason
        self.underlyingError = underlyingError
    }

    /// `.failed` because of `error`, with its description as the reason.
    public static func failed(_ error: Error) -> ExtensionError {
        let underlying: VaultError? = switch error {
        case let vault as VaultError: vault
        case let storage as StorageError: .storage(storage)
        case CredentialIdentityStoreError.internalError(let vault): vault
        default: nil
        }
        return ExtensionError(.failed, failureReason: "\(error)", underlyingError: underlying)
    }

    /// Equal codes and reasons (the underlying error is detail, not identity).
    public static func == (lhs: ExtensionError, rhs: ExtensionError) -> Bool {
        lhs.code == rhs.code && lhs.failureReason == rhs.failureReason
    }

    public var description: String {
        let name = switch code {
        case .failed: "failed"
        case .userCanceled: "userCanceled"
        case .userInteractionRequired: "userInteractionRequired"
        case .credentialIdentityNotFound: "credentialIdentityNotFound"
        case .matchedExcludedCredential: "matchedExcludedCredential"
        }
        return failureReason.map { "\(name) (\(code.rawValue)): \($0)" } ?? "\(name) (\(code.rawValue))"
    }
}
