import CofferDBus
import Coffer
import CofferBrowserHost
import CofferSecretService
import CofferTerminalKit

/// The exit codes of the errors only the CLI's own commands and features meet (the others': CofferTerminalKit's CommandFailure.swift).
extension ItemDocument.ParseError: CommandFailure {
    package var failure: CLIError { CLIError(description, hint: "nothing was changed", code: .usage) }
}

extension EditorSession.Failure: CommandFailure {
    package var failure: CLIError { CLIError(description, hint: "nothing was changed", code: .osError) }
}

extension BackgroundAgent.Failure: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .launch, .ended, .neverListened: CLIError("the agent could not be started: \(self)", code: .osError)
        }
    }
}


extension ImportError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .unknownFormat, .malformed: CLIError(description, hint: "nothing was imported", code: .dataError)
        case .programMissing: CLIError(description, hint: "nothing was imported", code: .unavailable)
        case .programFailed: CLIError(description, hint: "nothing was imported", code: .osError)
        }
    }
}

extension ExportError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .doesNotReadBack: CLIError(description, hint: "a writer lost a member: please report it", code: .software)
        case .changedDuringExport: CLIError(description, hint: "export again once nothing else is changing the vault", code: .temporaryFailure)
        }
    }
}

extension CompressionError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .corrupt, .tooLarge: CLIError(description, hint: "nothing was restored", code: .dataError)
        case .failed: CLIError(description, code: .osError)
        }
    }
}

extension BreachCheck.Failure: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .unavailable: CLIError(description, hint: "audit ran without the breach check", code: .unavailable)
        case .badList: CLIError(description, code: .dataError)
        }
    }
}


extension SSHAgentError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .unknownKey: CLIError(description, code: .noInput)
        case .noPrivateKey: CLIError(description, code: .dataError)
        case .locked: CLIError(description, hint: "run 'coffer unlock'", code: .temporaryFailure)
        case .declined: CLIError(description)
        }
    }
}


extension BrowserHostError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .badRequest, .unknownType, .tooLarge, .truncated, .relyingParty, .unsupported, .invalid: CLIError(description, code: .usage)
        case .conflict, .unavailable: CLIError(description, code: .temporaryFailure)
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
    package var failure: CLIError { CLIError(description, hint: "is a session bus running? ('dbus-run-session', or your desktop session)", code: .unavailable) }
}

extension SecretServiceReader.ReadError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .bus, .noProvider, .isCoffer, .dismissed: CLIError(description, hint: "nothing was imported", code: .unavailable)
        case .malformed: CLIError(description, hint: "nothing was imported", code: .dataError)
        }
    }
}

extension SecretServiceBus.StartError: CommandFailure {
    package var failure: CLIError {
        switch self {
        case .nameTaken(_, replaceRefused: false):
            CLIError(description, hint: "stop it, or run 'coffer secret-service --replace' to take over", code: .unavailable)
        case .nameTaken(_, replaceRefused: true):
            CLIError(description, hint: "stop it first (gnome-keyring: start it without the secrets component, --components=pkcs11,ssh)", code: .unavailable)
        case .noBus: CLIError(description, hint: "start one with 'dbus-run-session' or from your desktop session", code: .unavailable)
        }
    }
}
