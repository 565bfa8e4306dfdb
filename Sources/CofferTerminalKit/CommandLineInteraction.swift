import CofferProvider
import CofferHostKit

/// The provider's user interface on the command line: the master password from
/// --password-file, --password-stdin or a no-echo prompt; a numbered choice on the terminal.
package final class CommandLineInteraction: UserInteraction {
    package let context: CommandContext
    private var suppliedPasswordUsed = false

    package init(context: CommandContext) { self.context = context }

    package var suppliesPassword: Bool { context.arguments.has("password-file") || context.arguments.has("password-stdin") }

    /// Whether anyone can answer: a terminal (unless --no-interaction), or a supplied password.
    package var isAvailable: Bool {
        !context.arguments.has("no-interaction") && (context.terminal != nil || suppliesPassword)
    }

    package func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        if suppliesPassword {
            // A supplied password gets one attempt: retrying the same bytes cannot help.
            guard !suppliedPasswordUsed else { throw VaultError.wrongPassword }
            suppliedPasswordUsed = true
            return try context.masterPassword(prompt: "")
        }
        guard let terminal = context.terminal else { return nil }
        if attempt > 1 { terminal.write("Wrong master password, try again.\n") }
        return try terminal.readSecret(prompt: "Master password (\(reason)): ")
    }

    /// Where quick unlock is on, one no-echo prompt takes the PIN or the master password; a
    /// supplied password is never a PIN (the policy does not ask for one then).
    package func requestPINOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        guard !suppliesPassword, let terminal = context.terminal else { return try requestMasterPassword(attempt: attempt, reason: reason) }
        if attempt > 1 { terminal.write("Wrong PIN or master password, try again.\n") }
        return try terminal.readSecret(prompt: "PIN or master password (\(reason)): ")
    }

    /// Where the TPM alone opens the vault: Enter on an empty line is the person's "yes".
    package func requestTPMOrMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        guard !suppliesPassword, let terminal = context.terminal else { return try requestMasterPassword(attempt: attempt, reason: reason) }
        if attempt > 1 { terminal.write("Wrong master password, try again.\n") }
        return try terminal.readSecret(prompt: "Enter to unlock with the TPM, or the master password (\(reason)): ")
    }

    /// "deriving the key…" on stderr while Argon2id runs (only when it takes a while).
    package func willDeriveKey(_ parameters: KDFParameters) -> () -> Void {
        let progress = context.keyDerivationProgress(parameters)
        return { progress.finish() }
    }

    /// Only on a terminal: a supplied password authenticates a script, which cannot choose.
    package var canChooseIdentity: Bool { context.terminal != nil }

    /// On a terminal a numbered list, unless the only candidate may be filled without a choice
    /// anyway; with nobody to ask (a supplied password, no terminal), only what the provision
    /// rule allows without a person (SPEC.md §8.1), else nothing.
    package func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity? {
        guard let terminal = context.terminal else { return identities.first(where: \.allowsAutomaticFill)?.identity }
        if identities.count == 1, identities[0].allowsAutomaticFill { return identities[0].identity }
        for (number, ranked) in identities.enumerated() {
            let note = switch ranked.match?.level {
            case .registrableDomain?: "  (another host of the same site)"
            case .sharedCredential?: "  (saved for a site that shares its logins with this one)"
            default: ""
            }
            terminal.write("  \(number + 1)) \(ranked.identity.serviceIdentifier.identifier)  \(ranked.identity.user)\(note)\n")
        }
        guard let answer = terminal.readLine(prompt: "Choose 1-\(identities.count), or Enter to cancel: "), let number = Int(answer),
              identities.indices.contains(number - 1)
        else { return nil }
        return identities[number - 1].identity
    }
}
