import CofferFormat
/// Failures of vault operations. Wrong password, tampering, absence and lock state are distinct
/// cases so hosts can map them to distinct exit codes (SPEC.md §10).
public enum VaultError: Error, Equatable, Sendable {
    /// The master password did not unwrap the vault key.
    case wrongPassword
    /// The operation needs the vault key and the vault is locked.
    case locked
    /// No record with this id exists.
    case recordNotFound(RecordID)
    /// The container holds no vault header.
    case noVault(container: String)
    /// `create` found a vault (or other files) already in the container.
    case vaultExists(container: String)
    /// A file is corrupt or was tampered with; `file` names it, `reason` says what failed.
    case corrupt(file: String, reason: String)
    /// The header is valid but asks for KDF costs outside the accepted range.
    case kdfParametersOutOfRange(file: String)
    /// The vault is older than one this device has seen (SPEC.md §7.7): a whole-vault rollback,
    /// or a deliberate restore of an old backup (`acceptRollback()`).
    case rolledBack(generation: UInt64, highestSeen: UInt64)
    /// Invalid input from the caller (an empty service, an oversized note, …).
    case invalidInput(String)
    /// The item has no one-time code (asked for one, as `coffer otp` or an AutoFill code does):
    /// nothing matches, which is not bad data.
    case noOneTimeCode(item: String)
    /// The item carries no attachment of that name.
    case attachmentNotFound(item: String, name: String)
    case storage(StorageError)
    case crypto(CryptoError)
    /// A write stopped by an interrupt (Ctrl-C) before anything of it was committed: nothing
    /// was written (`Interruption`).
    case interrupted
    /// An edit made on the item as a person saw it (revision `expected`) found it changed since
    /// (`current`): nothing was written, so neither change is lost (SPEC.md §6.6).
    case editConflict(RecordID, expected: UInt64, current: UInt64)
}

extension VaultError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongPassword: "wrong master password"
        case .noOneTimeCode(let item): "'\(item)' has no one-time code"
        case .attachmentNotFound(let item, let name): "'\(item)' has no attachment named '\(name)'"
        case .locked: "the vault is locked"
        case .recordNotFound(let id): "no credential with id \(id)"
        case .noVault(let container): "no vault in \(container) (run 'coffer init' first)"
        case .vaultExists(let container): "\(container) already holds a vault or other files"
        case .corrupt(let file, let reason): "\(file) is corrupt or was tampered with: \(reason)"
        case .kdfParametersOutOfRange(let file):
            "\(file) asks for key-derivation costs outside the accepted range; refusing to derive"
        case .rolledBack(let generation, let highest):
            "the vault is at generation \(generation) but this device has seen generation \(highest): it was rolled back to an older copy"
        case .invalidInput(let reason): reason
        case .storage(let error): error.description
        case .crypto(let error): "cryptography failed: \(error)"
        case .interrupted: "interrupted: nothing was written"
        case .editConflict(let id, let expected, let current):
            "item \(id.hex.prefix(8)) changed while it was edited (revision \(expected), now \(current)): nothing was written"
        }
    }
}

/// Runs `body`, turning lower layers' errors into `VaultError` (format errors name `file`).
package func mappingErrors<Result>(file: String, _ body: () throws -> Result) throws(VaultError) -> Result {
    do {
        return try body()
    } catch let error as VaultError {
        throw error
    } catch let error as StorageError {
        throw .storage(error)
    } catch FormatError.kdfParametersOutOfRange {
        throw .kdfParametersOutOfRange(file: file)
    } catch let error as FormatError {
        throw .corrupt(file: file, reason: "\(error)")
    } catch CryptoError.authenticationFailed {
        throw .corrupt(file: file, reason: "authentication failed (modified, moved or from another vault)")
    } catch CryptoError.invalidPadding {
        throw .corrupt(file: file, reason: "invalid padding")
    } catch let error as CryptoError {
        throw .crypto(error)
    } catch {
        throw .corrupt(file: file, reason: "\(error)")
    }
}
