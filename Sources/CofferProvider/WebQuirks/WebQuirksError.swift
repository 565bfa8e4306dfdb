import CofferStore
import CofferFormat
/// Why the web's quirks data cannot be used. A host that meets it goes on without the data (a
/// default password, no shared-site suggestions), saying so: a damaged data file must not stop
/// anyone from signing in.
public enum WebQuirksError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(path: String)
    /// The file is not in the published format (the reason names what is wrong).
    case malformed(file: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path)"
        case .malformed(let file, let reason): "\(file) is not the published format: \(reason)"
        }
    }
}
