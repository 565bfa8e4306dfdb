import Coffer

/// sysexits(3) codes, as the CLI contract promises (SPEC.md §10).
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// The command ran and the answer is no: cancelled or declined, nothing chosen or
    /// removed, or `audit` found something.
    case failure = 1
    case usage = 64             // EX_USAGE
    case dataError = 65         // EX_DATAERR: corrupt or tampered data
    case noInput = 66           // EX_NOINPUT: no matching credential
    case unavailable = 69       // EX_UNAVAILABLE: a program, library, display or service it needs is missing
    case software = 70          // EX_SOFTWARE: an internal error (a bug)
    case osError = 71           // EX_OSERR: a helper program or a system call failed
    case exists = 73            // EX_CANTCREAT: the target already exists
    case ioError = 74           // EX_IOERR: reading or writing the container failed
    case temporaryFailure = 75  // EX_TEMPFAIL: locked and no interaction possible
    case permissionDenied = 77  // EX_NOPERM: wrong password
    case unsafeContainer = 78   // EX_CONFIG: the container is not private to this user
    /// Stopped by Ctrl-C (128 + SIGINT, what a shell reports), nothing of the write committed.
    case interrupted = 130
}

/// A command that ends with another program's exit status (`coffer run`), whatever it is.
struct ChildExit: Error {
    let status: Int32
}

/// An error already phrased for the user, with an optional hint.
struct CLIError: Error {
    let message: String
    let hint: String?
    let code: ExitCode

    init(_ message: String, hint: String? = nil, code: ExitCode = .failure) {
        self.message = message
        self.hint = hint
        self.code = code
    }

    /// Phrases any error from the library. Messages never contain secrets: the library's
    /// errors name files and ids, never contents.
    static func from(_ error: Error) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as VaultError: return from(error)
        case CredentialIdentityStoreError.internalError(let underlying): return from(underlying)
        case CredentialIdentityStoreError.storeBusy: return CLIError("\(error)", code: .temporaryFailure)
        case let error as CredentialIdentityStoreError: return CLIError(error.description, code: .unavailable)
        case let error as StorageError: return from(error)
        case let error as ExtensionError: return from(error)
        case let error as SyncError: return from(error)
        case let error as TeamError: return from(error)
        default: return CLIError("\(error)", code: .software)
        }
    }

    /// The provider's answers, as exit codes: 75 for userInteractionRequired, 66 for a missing
    /// credential, 65 for a tampered index or record.
    static func from(_ error: ExtensionError) -> CLIError {
        let reason = error.failureReason ?? "\(error)"
        switch error.code {
        case .userInteractionRequired:
            return CLIError("the vault is locked" + (error.failureReason.map { " (\($0))" } ?? ""),
                            hint: "run 'coffer unlock', or use a terminal, --password-stdin or --password-file", code: .temporaryFailure)
        case .credentialIdentityNotFound:
            return CLIError("the credential is gone: \(reason)", hint: "'coffer verify' checks the vault", code: .noInput)
        case .userCanceled:
            return CLIError("cancelled")
        case .matchedExcludedCredential:
            return CLIError("a passkey for this account is already saved", code: .dataError)
        case .failed:
            // The code comes from the underlying error's type, never the reason's wording.
            if let underlying = error.underlyingError { return from(underlying) }
            return CLIError(reason, code: .failure)
        }
    }

    static func from(_ error: VaultError) -> CLIError {
        switch error {
        case .wrongPassword:
            CLIError("wrong master password", code: .permissionDenied)
        case .locked:
            CLIError("the vault is locked and no terminal is available to ask for the master password",
                     hint: "run 'coffer unlock', or pass --password-stdin or --password-file", code: .temporaryFailure)
        case .recordNotFound:
            CLIError(error.description, hint: "'coffer list' shows the ids", code: .noInput)
        case .noVault:
            CLIError(error.description, code: .noInput)
        case .rolledBack:
            CLIError(error.description, hint: "if you restored an older backup on purpose, run the command again with --accept-rollback",
                     code: .dataError)
        case .corrupt, .kdfParametersOutOfRange:
            CLIError(error.description, hint: "'coffer verify' checks the whole vault", code: .dataError)
        case .invalidInput(let reason):
            CLIError(reason, code: .usage)
        case .noOneTimeCode:
            CLIError(error.description, code: .noInput)
        case .vaultExists:
            CLIError(error.description, code: .exists)
        case .crypto:
            CLIError(error.description, code: .software)
        case .interrupted:
            CLIError(error.description, code: .interrupted)
        case .storage(let storage):
            from(storage)
        }
    }

    /// Sync: a remote that cannot be reached is 69; what it holds that is not of the vault is
    /// 65 (a `VaultError`, or an oversized object here).
    static func from(_ error: TeamError) -> CLIError {
        switch error {
        case .refused: CLIError(error.description, hint: "an admin can check the list with 'coffer team members'", code: .dataError)
        case .notMember: CLIError(error.description, hint: "an admin adds you with the string 'coffer whoami' prints", code: .permissionDenied)
        case .removed(let team, _, _):
            CLIError(error.description, hint: "what you had stays on this device; 'coffer team leave \(team)' removes it", code: .permissionDenied)
        case .notAdmin: CLIError(error.description, hint: "'coffer team members' shows who the admins are", code: .permissionDenied)
        case .noTeam: CLIError(error.description, code: .noInput)
        case .teamExists: CLIError(error.description, code: .exists)
        case .invalid: CLIError(error.description, code: .usage)
        }
    }

    static func from(_ error: SyncError) -> CLIError {
        switch error {
        case .notConfigured: CLIError(error.description, code: .unsafeContainer)
        case .gitMissing: CLIError(error.description, hint: "install git (apt install git)", code: .unavailable)
        case .git: CLIError(error.description, hint: "nothing was lost: run 'coffer sync' again once git can reach the remote", code: .unavailable)
        case .unexpectedOutput: CLIError(error.description, code: .software)
        case .oversized: CLIError(error.description, hint: "nothing was merged", code: .dataError)
        case .emptyRemote: CLIError(error.description, hint: "run 'coffer sync remote URL' and 'coffer sync' on a device that has the vault", code: .noInput)
        case .targetNotEmpty: CLIError(error.description, hint: "choose another --container or --group", code: .exists)
        case .credentialsInURL: CLIError(error.description, hint: "leave the password out; git asks for it or takes it from a credential helper", code: .usage)
        case .plantedConfiguration:
            CLIError(error.description, hint: "remove what was planted, or run 'coffer sync remote URL' to have Coffer write the file anew", code: .dataError)
        case .damagedRepository:
            CLIError(error.description, hint: "the vault's own files are intact ('coffer verify'): run 'coffer sync' again, which rebuilds the repository", code: .unavailable)
        case .damagedRemote:
            CLIError(error.description, hint: "this device's vault is intact: repair the remote (git fsck there), or point this vault at a new, empty remote with 'coffer sync remote URL' and run 'coffer sync'", code: .dataError)
        case .remoteLocked:
            CLIError(error.description, hint: "if no other push to that remote is running, remove that file on the remote (or ask whoever runs the server), then run 'coffer sync' again", code: .temporaryFailure)
        }
    }

    /// A planted or misshapen file is rejected data (65, like a corrupt one); a container that
    /// others may enter or that is not ours is refused (78); other system errors are 74.
    static func from(_ error: StorageError) -> CLIError {
        if error.isRejectedFile {
            return CLIError(error.description, hint: "nothing was read through it or changed; 'coffer verify' lists every such entry",
                            code: .dataError)
        }
        if error.isUnsafeOwnership {
            return CLIError(error.description, hint: "a container must be yours and private (chmod -R go= on it); nothing was read",
                            code: .unsafeContainer)
        }
        return CLIError(error.description, code: .ioError)
    }
}
