import CofferFormat
/// Why a one-time-code secret or URI was refused. Messages name the part, never the secret.
public enum OneTimeCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case notAnOTPAuthURI(String)
    case invalidSecret(String)
    case invalidParameter(name: String, reason: String)
    case generationFailed(String)

    public var description: String {
        switch self {
        case .notAnOTPAuthURI(let reason): "not an otpauth:// URI or base32 secret: \(reason)"
        case .invalidSecret(let reason): "invalid one-time-code secret: \(reason)"
        case .invalidParameter(let name, let reason): "invalid one-time-code parameter '\(name)': \(reason)"
        case .generationFailed(let reason): "could not compute the one-time code: \(reason)"
        }
    }
}
