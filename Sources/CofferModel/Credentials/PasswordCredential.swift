import CofferSupport
/// A user name and password handed to the host. Apple's `ASPasswordCredential`.
///
/// - Warning: `password` is the secret itself; `description` redacts it, but code that prints
///   the property directly prints the password.
public struct PasswordCredential: Equatable, Sendable {
    public let user: String
    public let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

extension PasswordCredential: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PasswordCredential(user: \(user), password: <redacted>)" }
    public var debugDescription: String { description }
}
