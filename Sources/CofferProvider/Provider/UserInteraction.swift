import CofferStore
import CofferFormat
/// The provider's user interface, injected: a terminal prompt in the CLI, a script in tests, a
/// window in an embedding app. The provider calls it only from its interface entry points.
public protocol UserInteraction: AnyObject {
    /// Asks for the master password. `nil` means the user cancelled.
    /// - Parameter attempt: 1 for the first try, then 2, 3 after wrong passwords.
    func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes?

    /// Asks for the PIN or the master password, where quick unlock is on (SPEC.md §8.6): one
    /// prompt takes either. The default asks for the master password.
    func requestPINOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes?

    /// Where quick unlock by the TPM without a PIN is on (SPEC.md §8.6.1): one prompt where an
    /// empty answer means "unlock with the TPM" (the person's presence) and any other is the master
    /// password. The default asks for the master password.
    func requestTPMOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes?

    /// Whether the password comes from a script (`--password-stdin`, `--password-file`): that
    /// line is always the master password, never a PIN (SPEC.md §8.3). Default: no.
    var suppliesPassword: Bool { get }

    /// Lets the user pick one of `identities` (best first, each with its match level). `nil`
    /// means the user cancelled.
    /// - Warning: an interface with nobody to ask must not pick one whose `allowsAutomaticFill`
    ///   is false: that would release a password to a host no person chose (SPEC.md §8.1).
    func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity?

    /// Lets the person pick one of a relying party's passkeys (best first); `nil` means cancelled.
    /// The default asks nobody and picks none: a passkey is never chosen for a person.
    func choosePasskey(from identities: [PasskeyCredentialIdentity]) -> PasskeyCredentialIdentity?

    /// Lets the person pick one value of an item to insert as text (iOS 18's text insertion);
    /// `nil` means cancelled. The default asks nobody and picks none.
    func chooseTextToInsert(from texts: [InsertableText]) -> InsertableText?

    /// Whether a person can pick among suggestions here (default: yes).
    var canChooseIdentity: Bool { get }
    /// Asks the person to allow something (the SSH agent, before a signature with a key marked
    /// `confirm`). `false` when they decline, or when nobody can be asked (the default).
    func requestConfirmation(_ description: String) throws -> Bool
    /// Called as the key is about to be derived from a password just given (Argon2id takes up
    /// to seconds at the sensitive costs): an interface may show progress until the returned
    /// closure is called. The default shows nothing.
    func willDeriveKey(_ parameters: KDFParameters) -> () -> Void
}

extension UserInteraction {
    public func requestPINOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        try requestMasterPassword(attempt: attempt, reason: reason)
    }

    public func requestTPMOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        try requestMasterPassword(attempt: attempt, reason: reason)
    }

    public var suppliesPassword: Bool { false }

    /// Whether a person can pick among suggestions here (a terminal, a window). A script that
    /// only supplies the master password can authenticate but cannot choose; the host then
    /// fills nothing that needs a choice (SPEC.md §8.3).
    public var canChooseIdentity: Bool { true }

    public func choosePasskey(from identities: [PasskeyCredentialIdentity]) -> PasskeyCredentialIdentity? { nil }

    public func chooseTextToInsert(from texts: [InsertableText]) -> InsertableText? { nil }

    /// Nobody to ask: declined.
    public func requestConfirmation(_ description: String) throws -> Bool { false }

    public func willDeriveKey(_ parameters: KDFParameters) -> () -> Void { {} }
}
