import CofferSupport
/// What a credential is for: a domain or a URL. Apple's `ASCredentialServiceIdentifier`.
public struct CredentialServiceIdentifier: Hashable, Sendable {
    /// Apple's `ASCredentialServiceIdentifier.IdentifierType`; raw values are the JSON spelling.
    public enum IdentifierType: String, Hashable, Sendable {
        case domain
        case URL
    }

    /// A host name (`example.com`) for `.domain`, an absolute URL for `.URL`.
    public let identifier: String
    public let type: IdentifierType

    public init(identifier: String, type: IdentifierType) {
        self.identifier = identifier
        self.type = type
    }

    /// Reads what a user types: a string with `://` is a URL, anything else a domain.
    public init(parsing text: String) {
        if text.contains("://") {
            self.init(identifier: text, type: .URL)
        } else {
            self.init(identifier: text.lowercased(), type: .domain)
        }
    }
}

extension CredentialServiceIdentifier: CustomStringConvertible {
    public var description: String { identifier }
}
