import Coffer
import FoundationEssentials

struct ImportCommand: Command {
    static let name = "import"
    static let summary = "import the CSV/JSON export of a browser or password manager"
    static let usage = "import FILE [--format auto|chrome|firefox|bitwarden|bitwarden-json|keepassxc|apple|1password] [--encoding E] [--dry-run]"
    static let discussion = """
        Reads the export of Chrome/Edge, Firefox, Bitwarden (CSV or unencrypted JSON), KeePassXC
        ('keepassxc-cli export --format csv'), Apple Passwords/Safari or 1Password; 'auto' (the
        default) recognises the header. All or nothing: a malformed row names its line and nothing
        is imported. A credential whose service and user are already stored, or repeated in the
        file, is reported and skipped. One transaction, one index commit. The file must be UTF-8
        (a byte-order mark is fine) unless --encoding names another: a byte that is not valid is
        refused with its line and column, never replaced. Delete the export afterwards: it holds
        every password in plain text.
        """
    static let examples = ["coffer import ~/Downloads/Chrome\\ Passwords.csv", "coffer import bitwarden.json --dry-run"]
    static let options: [OptionSpec] = [
        .value("format", "the exporter (default: auto)"),
        .flag("dry-run", "parse and report, write nothing"),
        .value("encoding", "the file's encoding when it is not UTF-8: latin1, windows-1252 or utf-16 (converted exactly)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let file = try context.positionals(1...1, names: "FILE")[0]
        let requested = context.arguments.value("format").flatMap { $0 == "auto" ? nil : $0 }
        let format = try requested.map { name in
            guard let format = ImportFormat(rawValue: name) else {
                throw UsageError("unknown --format '\(name)'; use \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")) or auto")
            }
            return format
        }
        let encodingName = context.arguments.value("encoding") ?? "utf-8"
        guard let encoding = TextEncoding(rawValue: encodingName == "utf8" ? "utf-8" : encodingName) else {
            throw UsageError("unknown --encoding '\(encodingName.prefix(20))'; use \(TextEncoding.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let bytes = try FileSystem.standard.readUserFile(file, limit: 256 << 20)
        let (detected, credentials): (ImportFormat, [ImportedCredential])
        do {
            // Decoded exactly or refused: a byte of a password is never replaced (SPEC.md §11).
            (detected, credentials) = try CredentialImporter.parse(encoding.decode(bytes), format: format)
        } catch {
            throw CLIError("\(file): \(error)", hint: "nothing was imported", code: .dataError)
        }
        let vault = try context.unlockedVault()
        var seen = Set<String>()
        for ranked in try vault.identityStore.credentialIdentities(for: []) {
            seen.insert(key(ranked.identity.serviceIdentifier, ranked.identity.user))
        }
        var drafts: [RecordDraft] = []
        var duplicates = 0
        for credential in credentials {
            let draftKey = key(credential.draft.serviceIdentifiers[0], credential.draft.user)
            guard seen.insert(draftKey).inserted else {
                duplicates += 1
                context.note("line \(credential.line): \(credential.draft.serviceIdentifiers[0]) \(credential.draft.user): already stored, skipped")
                continue
            }
            drafts.append(credential.draft)
        }
        if context.arguments.has("dry-run") {
            context.note("\(detected.rawValue) export: would import \(drafts.count), skip \(duplicates) duplicate\(duplicates == 1 ? "" : "s") (dry run)")
            return .success
        }
        let progress = ProgressLine(io: context.io, label: "importing")
        try vault.add(drafts) { done, total in progress.update(done, of: total) }
        progress.finish()
        context.note("imported \(drafts.count) credential\(drafts.count == 1 ? "" : "s") from a \(detected.rawValue) export"
            + (duplicates > 0 ? "; skipped \(duplicates) duplicate\(duplicates == 1 ? "" : "s")" : ""))
        return .success
    }

    static func key(_ service: CredentialServiceIdentifier, _ user: String) -> String {
        service.identifier.lowercased() + "\u{0}" + user
    }
}

struct ExportCommand: Command {
    static let name = "export"
    static let summary = "print every credential in plain text (CSV or JSON)"
    static let usage = "export --format csv|json --plaintext"
    static let discussion = """
        Writes every credential, passwords included, to stdout. --plaintext is required: it says
        you know what this writes. The encrypted 'coffer backup' is the way to move a vault; an
        export is for leaving Coffer. CSV columns are Chrome's (name,url,username,password,note),
        which most managers import.
        """
    static let examples = ["coffer export --format csv --plaintext > passwords.csv"]
    static let options: [OptionSpec] = [
        .value("format", "csv or json"),
        .flag("plaintext", "acknowledge that the output holds every password unencrypted"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        _ = try context.positionals(0...0, names: "")
        guard context.arguments.has("plaintext") else {
            throw UsageError("export writes every password unencrypted; pass --plaintext to confirm (or use 'coffer backup')")
        }
        let format = context.arguments.value("format") ?? "csv"
        guard ["csv", "json"].contains(format) else { throw UsageError("--format must be csv or json") }
        let records = try context.unlockedVault().allRecords()
        if format == "json" {
            context.print(JSONOutput.render(.array(records.map(JSONOutput.record))))
        } else {
            var lines = ["name,url,username,password,note"]
            for record in records {
                let service = record.serviceIdentifiers.first?.identifier ?? ""
                lines.append([service, service, record.user, record.password, record.notes].map(CSV.quote).joined(separator: ","))
            }
            context.print(lines.joined(separator: "\n"))
        }
        return .success
    }
}
