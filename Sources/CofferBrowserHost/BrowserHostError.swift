import CofferProvider
import CofferHostKit

/// Why a request was not answered with what it asked for (SPEC.md §13.4). `code` is what the
/// extension branches on; the message is for a person and never holds a secret.
public enum BrowserHostError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request is not JSON, misses a member, or has one of the wrong type or value.
    case badRequest(String)
    case unknownType(String)
    /// A message over 1 MiB.
    case tooLarge(Int)
    /// The stream ended inside a message.
    case truncated
    /// The vault is locked and this request may not ask (`userInteractionRequired`).
    case locked
    /// The person cancelled the prompt or the choice.
    case cancelled
    /// Nothing stored for this origin (or no such record among its suggestions).
    case notFound
    /// Only suggestions a person must pick (another host of the site): nothing filled.
    case choiceRequired
    /// A login for this user and host already exists (`save`); use `update`.
    case exists
    /// The request is not allowed in this context (fill on page load over http, …).
    case forbidden(String)
    case wrongPassword
    /// A passkey request whose relying party id is not the page's host or a registrable domain
    /// above it (WebAuthn §5.1.3 step 8): the page's `SecurityError`.
    case relyingParty(String)
    /// A registration for an account whose passkey the vault holds (`excludeCredentials`): the
    /// page's `InvalidStateError`.
    case excluded
    /// A passkey request Coffer cannot serve (no algorithm it has): the browser's own flow runs.
    case unsupported(String)
    /// An item the vault page sent breaks a rule of its member (SPEC.md §6.6): nothing written.
    case invalid(member: String, String)
    /// The item changed since the page read it (its revision is not the one the page saw):
    /// nothing written; the answer carries `current`, the item as it is now.
    case conflict(current: JSONObject?)
    /// A service the request needs is out of reach (the breach check's range API).
    case unavailable(String)
    /// Anything else: a corrupt vault, a failing disk; the message says what.
    case failed(String)

    public var code: String {
        switch self {
        case .badRequest: "badRequest"
        case .unknownType: "unknownType"
        case .tooLarge: "tooLarge"
        case .truncated: "truncated"
        case .locked: "locked"
        case .cancelled: "cancelled"
        case .notFound: "notFound"
        case .choiceRequired: "choiceRequired"
        case .exists: "exists"
        case .forbidden: "forbidden"
        case .wrongPassword: "wrongPassword"
        case .relyingParty: "relyingParty"
        case .excluded: "excluded"
        case .unsupported: "unsupported"
        case .invalid: "invalid"
        case .conflict: "conflict"
        case .unavailable: "unavailable"
        case .failed: "failed"
        }
    }

    public var description: String {
        switch self {
        case .badRequest(let reason): "bad request: \(reason)"
        case .unknownType(let type): "unknown request type '\(type.prefix(40))'"
        case .tooLarge(let length): "message of \(length) bytes; the limit is \(NativeMessaging.maximumLength)"
        case .truncated: "the connection ended inside a message"
        case .locked: "the vault is locked"
        case .cancelled: "cancelled"
        case .notFound: "no login for this site"
        case .choiceRequired: "only logins of other hosts of this site: choose one"
        case .exists: "a login for this user already exists here; update it instead"
        case .forbidden(let reason): reason
        case .wrongPassword: "wrong master password"
        case .relyingParty(let reason): reason
        case .excluded: "a passkey for this account is already saved"
        case .unsupported(let reason): reason
        case .invalid(let member, let reason): "\(member): \(reason)"
        case .conflict: "the item changed since it was opened"
        case .unavailable(let reason): reason
        case .failed(let reason): reason
        }
    }

    /// What the error answer carries beside its code and message.
    var extra: JSONObject {
        if case .conflict(let current) = self { return ["current": current.map { .object($0) } ?? .null] }
        return [:]
    }

    /// The provider's answer as a host error: decided by the error's code and underlying
    /// error (Apple's `NSUnderlyingErrorKey`), never by its wording.
    static func from(_ error: ExtensionError) -> BrowserHostError {
        switch error.code {
        case .userInteractionRequired: .locked
        case .userCanceled: .cancelled
        case .credentialIdentityNotFound: .notFound
        case .matchedExcludedCredential: .excluded
        case .failed:
            if case .wrongPassword? = error.underlyingError { .wrongPassword } else { .failed(error.failureReason ?? "failed") }
        }
    }
}
