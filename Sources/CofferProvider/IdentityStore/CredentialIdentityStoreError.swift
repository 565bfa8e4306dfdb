import CofferStore
import CofferFormat
/// Apple's `ASCredentialIdentityStoreError.Code`, with the same raw values.
public enum CredentialIdentityStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Something failed underneath; the vault error says what (never a secret).
    case internalError(VaultError)
    /// The identity store is turned off on this device (or the vault is locked and it was
    /// never enabled here).
    case storeDisabled
    /// Another process holds the store and the caller asked not to wait.
    case storeBusy

    public var code: Int {
        switch self {
        case .internalError: 0
        case .storeDisabled: 1
        case .storeBusy: 2
        }
    }

    public var description: String {
        switch self {
        case .internalError(let underlying): "identity store error: \(underlying)"
        case .storeDisabled: "the identity store is disabled on this device"
        case .storeBusy: "the identity store is busy"
        }
    }
}
