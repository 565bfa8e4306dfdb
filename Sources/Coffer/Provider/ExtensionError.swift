/// Apple's `ASExtensionError`: why a provider cancelled a request. Raw values are Apple's.
public struct ExtensionError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Int, Sendable {
        case failed = 0
        case userCanceled = 1
        /// The silent path cannot proceed (the vault is locked); the host should call
        /// `prepareInterfaceToProvideCredential(for:)`.
        case userInteractionRequired = 100
        case credentialIdentityNotFound = 101
    }

    public let code: Code
    /// Apple's `NSLocalizedFailureReasonErrorKey`: what went wrong, never a secret.
    public let failureReason: String?

    public init(_ code: Code, failureReason: String? = nil) {
        self.code = code
        self.failureReason = failureReason
    }

    public var description: String {
        let name = switch code {
        case .failed: "failed"
        case .userCanceled: "userCanceled"
        case .userInteractionRequired: "userInteractionRequired"
        case .credentialIdentityNotFound: "credentialIdentityNotFound"
        }
        return failureReason.map { "\(name) (\(code.rawValue)): \($0)" } ?? "\(name) (\(code.rawValue))"
    }
}
