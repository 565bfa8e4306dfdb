import Coffer
import CofferTerminalKit
import FoundationEssentials

/// `coffer whoami`: the recipient string and fingerprint of this person's identity (SPEC.md §16.1).
struct WhoamiCommand: Command {
    static let name = "whoami"
    static let summary = "print your recipient string for teams, and its fingerprint"
    static let usage = "whoami [--json]"
    static let discussion = """
        Prints one line an admin of a team passes to 'coffer team add', and a fingerprint of
        thirty digits to compare aloud (on a call, in person) so that nobody in between can swap
        the string for their own. The identity belongs to your vault: every device of it has the
        same one. Needs the vault unlocked.
        """
    static let options: [OptionSpec] = [.flag("json", "print {\"recipient\", \"fingerprint\"}")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        let recipient = try context.unlockedVault().personalIdentity().recipient
        if context.wantsJSON {
            context.print(JSONOutput.render(.object(["recipient": .string(recipient.text), "fingerprint": .string(recipient.fingerprint)])))
        } else {
            context.print(recipient.text)
            context.note("fingerprint: \(recipient.fingerprint)")
        }
        return .success
    }
}
