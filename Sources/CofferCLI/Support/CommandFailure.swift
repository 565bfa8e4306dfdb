import Coffer
import CofferBrowserHost
import CofferSecretService
import Glibc

/// An error a command can end with, stating its exit code and its words (SPEC.md §10). Every
/// error type a command meets conforms here, in one place; each enum's conformance switches over
/// its cases without `default`, so a case added to the library does not compile until it has a
/// code. `ExitCodeCoverageTests` fails for an error type of the sources that conforms nowhere.
protocol CommandFailure: Error {
    var failure: CLIError { get }
}

// MARK: The CLI's own

extension CLIError: CommandFailure {
    var failure: CLIError { self }
}

extension UsageError: CommandFailure {
    var failure: CLIError { CLIError(message, code: .usage) }
}

extension ChildExit: CommandFailure {
    /// Only reached where a child's status is phrased (the caller normally exits with it).
    var failure: CLIError { CLIError("the command exited with status \(status)", code: status == 0 ? .success : .failure) }
}

extension ItemDocument.ParseError: CommandFailure {
    var failure: CLIError { CLIError(description, hint: "nothing was changed", code: .usage) }
}

extension EditorSession.Failure: CommandFailure {
    var failure: CLIError { CLIError(description, hint: "nothing was changed", code: .osError) }
}

extension BackgroundAgent.Failure: CommandFailure {
    var failure: CLIError {
        switch self {
        case .launch, .ended, .neverListened: CLIError("the agent could not be started: \(self)", code: .osError)
        }
    }
}

// MARK: The vault and its store

extension ItemRuleViolation: CommandFailure {
    var failure: CLIError { CLIError(reason, code: .usage) }
}

extension VaultError: CommandFailure {
    var failure: CLIError {
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
    var failure: CLIError {
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
    var failure: CLIError { CLIError("\(self)", hint: "'coffer verify' checks the whole vault", code: .dataError) }
}

extension CryptoError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .authenticationFailed, .invalidLength, .invalidPadding, .invalidKey:
            CLIError("\(self)", hint: "'coffer verify' checks the whole vault", code: .dataError)
        case .initializationFailed, .allocationFailed, .keyDerivationFailed:
            CLIError("\(self)", hint: "the system refused memory or libsodium could not start", code: .osError)
        }
    }
}

extension JSONSyntaxError: CommandFailure {
    var failure: CLIError { CLIError(description, code: .dataError) }
}

extension CredentialIdentityStoreError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .internalError(let underlying): underlying.failure
        case .storeBusy: CLIError(description, code: .temporaryFailure)
        case .storeDisabled: CLIError(description, hint: "'coffer provider enable' turns it on", code: .unavailable)
        }
    }
}

extension KeyringSessions.Unavailable: CommandFailure {
    var failure: CLIError {
        switch self {
        case .keyring: CLIError(description, hint: "without the keyring every command asks for the master password", code: .unavailable)
        }
    }
}

// MARK: The provider

extension ExtensionError: CommandFailure {
    /// The provider's answers: 75 for userInteractionRequired, 66 for a missing credential, the
    /// underlying error's own code for a failure.
    var failure: CLIError {
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

// MARK: Sync and teams

extension SyncError: CommandFailure {
    /// A remote that cannot be reached is 69; what it holds that is not of the vault is 65.
    var failure: CLIError {
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
        case .remoteLocked:
            CLIError(description, hint: "if no other push to that remote is running, remove that file on the remote (or ask whoever runs the server), then run 'coffer sync' again", code: .temporaryFailure)
        }
    }
}

extension TeamError: CommandFailure {
    var failure: CLIError {
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

// MARK: Import, export and what items hold

extension ImportError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .unknownFormat, .malformed: CLIError(description, hint: "nothing was imported", code: .dataError)
        case .programMissing: CLIError(description, hint: "nothing was imported", code: .unavailable)
        case .programFailed: CLIError(description, hint: "nothing was imported", code: .osError)
        }
    }
}

extension ExportError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .doesNotReadBack: CLIError(description, hint: "a writer lost a member: please report it", code: .software)
        }
    }
}

extension OneTimeCodeError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .notAnOTPAuthURI, .invalidSecret, .invalidParameter: CLIError(description, code: .dataError)
        case .generationFailed: CLIError(description, code: .software)
        }
    }
}

extension PasswordRulesError: CommandFailure {
    var failure: CLIError { CLIError("password rules: \(description)", code: .usage) }
}

extension WebQuirksError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .unreadable: CLIError(description, code: .ioError)
        case .malformed: CLIError(description, hint: "run 'coffer quirks update' again", code: .dataError)
        }
    }
}

extension CompressionError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .corrupt, .tooLarge: CLIError(description, hint: "nothing was restored", code: .dataError)
        case .failed: CLIError(description, code: .osError)
        }
    }
}

extension LoadedLibrary.LoadError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .missing: CLIError(description, code: .unavailable)
        case .incompatible: CLIError(description, code: .unavailable)
        }
    }
}

extension BreachCheck.Failure: CommandFailure {
    var failure: CLIError {
        switch self {
        case .unavailable: CLIError(description, hint: "audit ran without the breach check", code: .unavailable)
        case .badList: CLIError(description, code: .dataError)
        }
    }
}

// MARK: SSH

extension SSHWireError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .truncated, .malformed: CLIError(description, code: .dataError)
        }
    }
}

extension OpenSSHKeyError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .notAPrivateKey, .unsupportedKeyType, .malformed: CLIError(description, code: .dataError)
        case .encrypted: CLIError(description, hint: "install openssh-client (ssh-keygen opens keys with a passphrase)", code: .unavailable)
        }
    }
}

extension SSHAgentError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .unknownKey: CLIError(description, code: .noInput)
        case .noPrivateKey: CLIError(description, code: .dataError)
        case .locked: CLIError(description, hint: "run 'coffer unlock'", code: .temporaryFailure)
        case .declined: CLIError(description)
        }
    }
}

// MARK: Programs, sockets, pinentry

extension ChildProcessError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .launch(_, let code) where code == ENOENT: CLIError(description, code: .unavailable)
        case .launch, .io, .lineTooLong: CLIError(description, code: .osError)
        }
    }
}

extension UnixListenerError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .inUse: CLIError(description, hint: "stop it first, or give --socket PATH", code: .unavailable)
        case .unsafeDirectory: CLIError(description, code: .unsafeContainer)
        case .pathTooLong, .notASocket: CLIError(description, code: .usage)
        case .system: CLIError(description, code: .osError)
        }
    }
}

extension AssuanError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .unavailable: CLIError(description, hint: "install a pinentry, or name one with COFFER_PINENTRY", code: .unavailable)
        case .malformed: CLIError(description, code: .osError)
        case .refused: CLIError(description)
        }
    }
}

// MARK: The other hosts' errors, where the CLI meets them

extension BrowserHostError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .badRequest, .unknownType, .tooLarge, .truncated, .relyingParty, .unsupported: CLIError(description, code: .usage)
        case .locked: CLIError(description, hint: "run 'coffer unlock'", code: .temporaryFailure)
        case .cancelled, .choiceRequired: CLIError(description)
        case .notFound: CLIError(description, code: .noInput)
        case .exists, .excluded: CLIError(description, code: .exists)
        case .forbidden: CLIError(description, code: .permissionDenied)
        case .wrongPassword: CLIError(description, code: .permissionDenied)
        case .failed: CLIError(description, code: .software)
        }
    }
}

extension DBusError: CommandFailure {
    var failure: CLIError { CLIError(description, hint: "is a session bus running? ('dbus-run-session', or your desktop session)", code: .unavailable) }
}

extension SecretServiceReader.ReadError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .bus, .noProvider, .isCoffer, .dismissed: CLIError(description, hint: "nothing was imported", code: .unavailable)
        case .malformed: CLIError(description, hint: "nothing was imported", code: .dataError)
        }
    }
}

extension SecretServiceBus.StartError: CommandFailure {
    var failure: CLIError {
        switch self {
        case .nameTaken(_, replaceRefused: false):
            CLIError(description, hint: "stop it, or run 'coffer secret-service --replace' to take over", code: .unavailable)
        case .nameTaken(_, replaceRefused: true):
            CLIError(description, hint: "stop it first (gnome-keyring: start it without the secrets component, --components=pkcs11,ssh)", code: .unavailable)
        case .noBus: CLIError(description, hint: "start one with 'dbus-run-session' or from your desktop session", code: .unavailable)
        }
    }
}
