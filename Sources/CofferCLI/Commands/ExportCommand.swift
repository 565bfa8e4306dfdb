import Coffer
import CofferTerminalKit
import CofferSecretService
import FoundationEssentials

struct ExportCommand: Command {
    static let name = "export"
    static let summary = "print every item in plain text (CSV, JSON or CXF)"
    static let usage = "export --format csv|json|cxf --plaintext [--lossy]"
    static let discussion = """
        Writes every item, passwords included, to stdout. --plaintext is required: it says you
        know what this writes. The encrypted 'coffer backup' is the way to move a vault; an export
        is for leaving Coffer. csv starts with Chrome's columns (name,url,username,password,note),
        which most managers import, and carries every other member in columns of its own (kind,
        urls, tags, otpauth, fields, match, history, passkey, secretservice, created, modified),
        so 'coffer import' reads every item back equal. json is Coffer's own record documents
        (passkeys with their keys); cxf is the FIDO Alliance's Credential Exchange Format, which
        Bitwarden, 1Password, Dashlane and Apple's Passwords read. Every export is read back
        before it is written: when the format cannot carry a member of an item (CXF carries no
        passkey signature counter, for one), the items and members are named and nothing is
        written (exit 1) unless --lossy accepts leaving them out.
        """
    static let examples = ["coffer export --format csv --plaintext > passwords.csv", "coffer export --format cxf --plaintext --lossy > vault.cxf.json"]
    static let options: [OptionSpec] = [
        .value("format", "csv, json or cxf"),
        .flag("plaintext", "acknowledge that the output holds every password unencrypted"),
        .flag("lossy", "write the export even where the format cannot carry some members (they are named)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        guard context.arguments.has("plaintext") else {
            throw UsageError("export writes every password unencrypted; pass --plaintext to confirm (or use 'coffer backup')")
        }
        let name = context.arguments.value("format") ?? "csv"
        guard let format = ExportFormat(rawValue: name) else { throw UsageError("--format must be csv, json or cxf") }
        let vault = try context.unlockedVault()
        let progress = ProgressLine(io: context.io, label: "exporting", enabled: !context.wantsJSON)
        let records = try vault.allRecords()
        let result = try ItemExporter.export(records, as: format, accountID: vault.vaultID.bytes) { record, attachment in
            var bytes: [UInt8] = []
            try vault.readAttachment(attachment, of: record) { bytes += $0 }
            return bytes
        }
        progress.finish()
        for item in result.leftOut {
            context.note("'\(item.title)': \(name) cannot carry its \(item.members.joined(separator: ", "))")
        }
        if !result.passkeysLeftOutForTheirCounter.isEmpty {
            context.note("CXF carries no passkey signature counter: a passkey whose counter is not 0 is left out (\(result.passkeysLeftOutForTheirCounter.count))")
        }
        if !result.leftOut.isEmpty && !context.arguments.has("lossy") {
            throw CLIError("\(result.leftOut.count) item\(result.leftOut.count == 1 ? "" : "s") would lose members in \(name) (named above); nothing was written",
                           hint: "--lossy writes it without them; --format \(format == .json ? "csv" : "json") carries every member", code: .failure)
        }
        if result.text.utf8.count > ItemImporter.maximumFileLength {
            context.note("this export is \(result.text.utf8.count >> 20) MiB, more than 'coffer import' reads (\(ItemImporter.maximumFileLength >> 20) MiB): its attachments make it large; 'coffer backup' carries them at any size")
        }
        context.print(result.text)
        return .success
    }
}
