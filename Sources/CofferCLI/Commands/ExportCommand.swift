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
        let content = { (record: Record, attachment: Attachment) throws -> [UInt8] in
            var bytes: [UInt8] = []
            try vault.readAttachment(attachment, of: record) { bytes += $0 }
            return bytes
        }
        guard ItemExporter.writesInParts(format) else {
            let result = try ItemExporter.export(vault.allRecords(), as: format, accountID: vault.vaultID.bytes, content: content)
            progress.finish()
            try checkLosses(result.leftOut, counters: result.passkeysLeftOutForTheirCounter, length: result.text.utf8.count, format: format, context)
            context.print(result.text)
            return .success
        }
        // A part per `records/<xx>` directory, read twice: once to check what the format carries,
        // once to write. A million items are never held at once (3.4 GB when they were).
        let parts = 256
        let part = { (group: Int) throws -> [Record] in
            defer { progress.advance(of: parts) }
            return try vault.records(inGroup: UInt8(group))
        }
        let check = try ItemExporter.checkInParts(parts, as: format, records: part, content: content)
        progress.finish()
        try checkLosses(check.leftOut, counters: [], length: check.length, format: format, context)
        try ItemExporter.writeInParts(check, records: { try vault.records(inGroup: UInt8($0)) }, content: content) { context.io.standardOutput($0) }
        context.io.standardOutput("\n")
        return .success
    }

    /// Names what `format` cannot carry and, unless `--lossy` accepts it, refuses before
    /// anything is written.
    private static func checkLosses(
        _ leftOut: [ExportResult.LeftOut], counters: [String], length: Int, format: ExportFormat, _ context: CommandContext
    ) throws {
        let name = format.rawValue
        for item in leftOut {
            context.note("'\(item.title)': \(name) cannot carry its \(item.members.joined(separator: ", "))")
        }
        if !counters.isEmpty {
            context.note("CXF carries no passkey signature counter: a passkey whose counter is not 0 is left out (\(counters.count))")
        }
        if !leftOut.isEmpty && !context.arguments.has("lossy") {
            throw CLIError("\(leftOut.count) item\(leftOut.count == 1 ? "" : "s") would lose members in \(name) (named above); nothing was written",
                           hint: "--lossy writes it without them; --format \(format == .json ? "csv" : "json") carries every member", code: .failure)
        }
        if length > ItemImporter.maximumFileLength {
            context.note("this export is \(length >> 20) MiB, more than 'coffer import' reads (\(ItemImporter.maximumFileLength >> 20) MiB): its attachments make it large; 'coffer backup' carries them at any size")
        }
    }
}
