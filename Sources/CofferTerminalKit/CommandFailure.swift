import CofferProvider
import CofferHostKit


/// An error a command can end with, stating its exit code and its words (SPEC.md §10). Every
/// error type of the layers below conforms here, those of the CLI's own features in CofferCLI's
/// CommandFailure.swift; each enum's conformance switches over its cases without `default`, so a
/// case added to the library does not compile until it has a code. `ExitCodeCoverageTests`
/// fails for an error type of the sources that conforms nowhere.
package protocol CommandFailure: Error {
    var failure: CLIError { get }
}


extension CLIError: CommandFailure {
    package var failure: CLIError { self }
}

extension UsageError: CommandFailure {
    package var failure: CLIError { CLIError(message, code: .usage) }
}

extension ChildExit: CommandFailure {
    /// Only reached where a child's status is phrased (the caller normally exits with it).
    package var failure: CLIError { CLIError("the command exited with status \(status)", code: status == 0 ? .success : .failure) }
}

extension ItemRuleViolation: CommandFailure {
    package var failure: CLIError { CLIError(reason, code: .usage) }
}

extension VaultError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .wrongPassword:
            CLIError("wrong master password", code: .permissionDenied)
        case .locked:
            CLIError("the vault is locked and no terminal is available to ask for the master password",
                     hint: "run 'coffer unlock', or pass --password-stdin or --password-file", code: .temporaryFailure)
        case .recordNotFound:
            CLIError(description, hint: "'coffer list' shows the ids", code: .noInput)
        case .noVault:
            CLIError(description, code: .noInput)
        case .rolledBack:
            CLIError(description, hint: "if you restored an older backup on purpose, run the command again with --accept-rollback",
                     code: .dataError)
        case .corrupt, .kdfParametersOutOfRange:
            CLIError(description, hint: "'coffer verify' checks the whole vault", code: .dataError)
        case .invalidInput(let reason):
            CLIError(reason, code: .usage)
        case .noOneTimeCode:
            CLIError(description, code: .noInput)
        case .attachmentNotFound:
            CLIError(description, hint: "'coffer attachment list ENTRY' names them", code: .noInput)
        case .vaultExists:
            CLIError(description, code: .exists)
        case .crypto(let error):
            error.failure
        case .interrupted:
            CLIError(description, code: .interrupted)
        case .editConflict:
            CLIError(description, hint: "'coffer show' prints it as it is now; edit that", code: .temporaryFailure)
        case .storage(let storage):
            storage.failure
        }
    }
}

extension StorageError: CommandFailure {
    /// A planted or misshapen file is rejected data (65, like a corrupt one); a container that
    /// others may enter or that is not ours is refused (78); other system errors are 74.
    package var failure: CLIError {
        if isRejectedFile {
            return CLIError(description, hint: "nothing was read through it or changed; 'coffer verify' lists every such entry",
                            code: .dataError)
        }
        if isUnsafeOwnership {
            return CLIError(description, hint: "a container must be yours and private (chmod -R go= on it); nothing was read",
                            code: .unsafeContainer)
        }
        return CLIError(description, code: .ioError)
    }
}

extension FormatError: CommandFailure {
    package var failure: CLIError { CLIError("\(self)", hint: "'coffer verify' checks the whole vault", code: .dataError) }
}

extension CryptoError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .authenticationFailed, .invalidLength, .invalidPadding, .invalidKey:
            CLIError("\(self)", hint: "'coffer verify' checks the whole vault", code: .dataError)
        case .initializationFailed, .allocationFailed, .keyDerivationFailed:
            CLIError("\(self)", hint: "the system refused memory or libsodium could not start", code: .osError)
        }
    }
}

extension JSONSyntaxError: CommandFailure {
    package var failure: CLIError { CLIError(description, code: .dataError) }
}

extension CredentialIdentityStoreError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .internalError(let underlying): underlying.failure
        case .storeBusy: CLIError(description, code: .temporaryFailure)
        case .storeDisabled: CLIError(description, hint: "'coffer provider enable' turns it on", code: .unavailable)
        }
    }
}

extension KeyringSessions.Unavailable: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .keyring: CLIError(description, hint: "without the keyring every command asks for the master password", code: .unavailable)
        }
    }
}


extension ExtensionError: CommandFailure {
    /// The provider's answers: 75 for userInteractionRequired, 66 for a missing credential, the
    /// underlying error's own code for a failure.
    package var failure: CLIError {
        let reason = failureReason ?? "\(self)"
        switch code {
        case .userInteractionRequired:
            return CLIError("the vault is locked" + (failureReason.map { " (\($0))" } ?? ""),
                            hint: "run 'coffer unlock', or use a terminal, --password-stdin or --password-file", code: .temporaryFailure)
        case .credentialIdentityNotFound:
            return CLIError("the credential is gone: \(reason)", hint: "'coffer verify' checks the vault", code: .noInput)
        case .userCanceled:
            return CLIError("cancelled")
        case .matchedExcludedCredential:
            return CLIError("a passkey for this account is already saved", code: .dataError)
        case .failed:
            // The code comes from the underlying error's type, never the reason's wording.
            if let underlying = underlyingError { return CLIError.from(underlying) }
            return CLIError(reason, code: .failure)
        }
    }
}


extension SyncError: CommandFailure {
    /// A remote that cannot be reached is 69; what it holds that is not of the vault is 65.
    package var failure: CLIError {
        switch self {
        case .notConfigured: CLIError(description, code: .unsafeContainer)
        case .gitMissing: CLIError(description, hint: "install git (apt install git)", code: .unavailable)
        case .git: CLIError(description, hint: "nothing was lost: run 'coffer sync' again once git can reach the remote", code: .unavailable)
        case .unexpectedOutput: CLIError(description, code: .software)
        case .oversized: CLIError(description, hint: "nothing was merged", code: .dataError)
        case .emptyRemote: CLIError(description, hint: "run 'coffer sync remote URL' and 'coffer sync' on a device that has the vault", code: .noInput)
        case .targetNotEmpty: CLIError(description, hint: "choose another --container or --group", code: .exists)
        case .credentialsInURL: CLIError(description, hint: "leave the password out; git asks for it or takes it from a credential helper", code: .usage)
        case .plantedConfiguration:
            CLIError(description, hint: "remove what was planted, or run 'coffer sync remote URL' to have Coffer write the file anew", code: .dataError)
        case .damagedRepository:
            CLIError(description, hint: "the vault's own files are intact ('coffer verify'): run 'coffer sync' again, which rebuilds the repository", code: .unavailable)
        case .damagedRemote:
            CLIError(description, hint: "this device's vault is intact: repair the remote (git fsck there), or point this vault at a new, empty remote with 'coffer sync remote URL' and run 'coffer sync'", code: .dataError)
        case .outpaced: CLIError(description, hint: "nothing was lost: run 'coffer sync' again (on a busy team's remote, a few seconds later)", code: .unavailable)
        case .remoteLocked:
            CLIError(description, hint: "if no other push to that remote is running, remove that file on the remote (or ask whoever runs the server), then run 'coffer sync' again", code: .temporaryFailure)
        }
    }
}

extension TeamError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .refused: CLIError(description, hint: "an admin can check the list with 'coffer team members'", code: .dataError)
        case .notMember: CLIError(description, hint: "an admin adds you with the string 'coffer whoami' prints", code: .permissionDenied)
        case .removed(let team, _, _):
            CLIError(description, hint: "what you had stays on this device; 'coffer team leave \(team)' removes it", code: .permissionDenied)
        case .notAdmin: CLIError(description, hint: "'coffer team members' shows who the admins are", code: .permissionDenied)
        case .noTeam: CLIError(description, code: .noInput)
        case .teamExists: CLIError(description, code: .exists)
        case .invalid: CLIError(description, code: .usage)
        }
    }
}


extension OneTimeCodeError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .notAnOTPAuthURI, .invalidSecret, .invalidParameter: CLIError(description, code: .dataError)
        case .generationFailed: CLIError(description, code: .software)
        }
    }
}

extension GeneratorError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .noCharacterClass, .lengthOutOfRange, .wordCountOutOfRange, .wordListTooSmall: CLIError(description, code: .usage)
        }
    }
}

extension PasswordRulesError: CommandFailure {
    package var failure: CLIError { CLIError("password rules: \(description)", code: .usage) }
}

extension WebQuirksError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .unreadable: CLIError(description, code: .ioError)
        case .malformed: CLIError(description, hint: "run 'coffer quirks update' again", code: .dataError)
        }
    }
}

extension LoadedLibrary.LoadError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .missing: CLIError(description, code: .unavailable)
        case .incompatible: CLIError(description, code: .unavailable)
        }
    }
}

extension SSHWireError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .truncated, .malformed: CLIError(description, code: .dataError)
        }
    }
}

extension OpenSSHKeyError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .notAPrivateKey, .unsupportedKeyType, .malformed: CLIError(description, code: .dataError)
        case .encrypted: CLIError(description, hint: "install openssh-client (ssh-keygen opens keys with a passphrase)", code: .unavailable)
        }
    }
}

extension Errno: CommandFailure {
    package var failure: CLIError { CLIError("a system call failed: \(description)", code: .osError) }
}

extension ChildProcessError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .launch(_, let code) where code == Errno.notFound.rawValue: CLIError(description, code: .unavailable)
        case .launch, .io, .lineTooLong: CLIError(description, code: .osError)
        }
    }
}

extension UnixListenerError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .inUse: CLIError(description, hint: "stop it first, or give --socket PATH", code: .unavailable)
        case .unsafeDirectory: CLIError(description, code: .unsafeContainer)
        case .pathTooLong, .notASocket: CLIError(description, code: .usage)
        case .system: CLIError(description, code: .osError)
        }
    }
}

extension AssuanError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .unavailable: CLIError(description, hint: "install a pinentry, or name one with COFFER_PINENTRY", code: .unavailable)
        case .malformed: CLIError(description, code: .osError)
        case .refused: CLIError(description)
        }
    }
}


extension TPMChannel.Failure: CommandFailure {
    package var failure: CLIError {
        CLIError(description, hint: "Coffer uses /dev/tpmrm0 (COFFER_TPM_TCTI names another TPM)", code: .unavailable)
    }
}

extension TPMQuickUnlockError: CommandFailure {
    package var failure: CLIError {
        CLIError("the TPM could not seal quick unlock's secret: \(description)", hint: "Coffer uses /dev/tpmrm0 (COFFER_TPM_TCTI names another TPM)", code: .unavailable)
    }
}

extension AttachmentOpener.Failure: CommandFailure {
    package var failure: CLIError { CLIError("an attachment \(description)", hint: "'coffer verify' checks every attachment", code: .dataError) }
}
