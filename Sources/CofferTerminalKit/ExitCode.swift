import CofferProvider
import CofferHostKit

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
package struct ChildExit: Error {
    package let status: Int32

    package init(status: Int32) { self.status = status }
}

/// An error already phrased for the user, with an optional hint.
package struct CLIError: Error {
    package let message: String
    package let hint: String?
    package let code: ExitCode

    package init(_ message: String, hint: String? = nil, code: ExitCode = .failure) {
        self.message = message
        self.hint = hint
        self.code = code
    }

    /// Phrases any error: its type states the code and words (`CommandFailure`). A type that
    /// states none is a bug — `ExitCodeCoverageTests` names every error type of the sources and
    /// fails for one without a conformance — and exits 70.
    package static func from(_ error: any Error) -> CLIError {
        if let stated = error as? any CommandFailure { return stated.failure }
        return CLIError("an internal error: \(error)", hint: "please report it", code: .software)
    }
}
