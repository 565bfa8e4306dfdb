import Coffer
import CofferTerminalKit
import CofferSecretService
import FoundationEssentials

struct ImportCommand: Command {
    static let name = "import"
    static let changesVault = true
    static let summary = "import the export of a browser or password manager, or a pass store"
    static let usage = "import FILE|DIRECTORY [--format FORMAT] [--encoding E] [--dry-run] | import --from secret-service [--dry-run]"
    static let discussion = """
        Reads the export of Bitwarden (CSV or unencrypted JSON), 1Password (CSV or 1PUX), KeePassXC
        (CSV) or KeePass 2 (XML), Chrome/Chromium/Edge, Firefox or Safari/Apple Passwords (CSV), a
        pass store directory (each file decrypted with gpg), or Coffer's own JSON export; the
        format is recognised unless --format names it. Names, folders (as tags), every URL, notes,
        custom fields (hidden ones hidden), one-time codes, password history, favourites (the tag
        'favorite'), secure notes, cards and identities are kept; the report printed after every
        import says where each column went, and what was dropped and how often. An item equal in
        every member to one already stored (or earlier in the file) is skipped; items that only
        share service and user are both kept and named. All or nothing, in one transaction: what
        cannot be read names its line or item and nothing is imported (exit 65). --dry-run prints
        the same report and writes nothing. The file must be UTF-8 unless --encoding names another.
        Delete the export afterwards: it holds every password in plain text. --from secret-service
        copies every item of the keyring running on the session bus (gnome-keyring, KWallet,
        KeePassXC) as 'secret' items, each collection unlocked through that keyring's own prompt.
        """
    static let examples = [
        "coffer import ~/Downloads/bitwarden_export.json", "coffer import 1PasswordExport.1pux --dry-run",
        "coffer import ~/.password-store", "coffer import passwords.csv --format chrome --encoding windows-1252",
        "coffer import --from secret-service",
    ]
    static let options: [OptionSpec] = [
        .value("format", "the exporter: " + ImportFormat.allCases.map(\.rawValue).joined(separator: ", ") + " (default: recognise it)"),
        .flag("dry-run", "read and report, write nothing"),
        .value("from", "secret-service: the keyring running on the session bus instead of a file"),
        .value("encoding", "the file's encoding when it is not UTF-8: latin1, windows-1252 or utf-16 (converted exactly)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        if let from = context.arguments.value("from") {
            guard from == ImportFormat.secretService.rawValue else { throw UsageError("--from takes 'secret-service', not '\(from.prefix(20))'") }
            _ = try context.positionals(0...0, names: "")
            return try importFromSecretService(context)
        }
        let path = try context.positionals(1...1, names: "FILE")[0]
        let requested = context.arguments.value("format").flatMap { $0 == "auto" ? nil : $0 }
        let format = try requested.map { name in
            guard let format = ImportFormat(rawValue: name) else {
                throw UsageError("unknown --format '\(name.prefix(20))'; use \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return format
        }
        let encodingName = context.arguments.value("encoding") ?? "utf-8"
        guard let encoding = TextEncoding(rawValue: encodingName == "utf8" ? "utf-8" : encodingName) else {
            throw UsageError("unknown --encoding '\(encodingName.prefix(20))'; use \(TextEncoding.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let source: ImportSource
        if let directory = try? FileSystem.standard.openDirectory(atPath: path, check: .anyOwner) {
            source = .directory(directory)
        } else {
            source = .file(bytes: try FileSystem.standard.readUserFile(path, limit: ItemImporter.maximumFileLength), encoding: encoding)
        }
        let vault = try context.unlockedVault()
        var (items, report): ([ImportedItem], ImportReport)
        do {
            (items, report) = try ItemImporter.read(source, format: format, environment: context.io.environment)
        } catch {
            // The error's type says the code: a damaged export 65, a missing gpg 69 (SPEC.md §10).
            throw CLIError("\(path): \(error)", hint: "nothing was imported", code: CLIError.from(error).code)
        }
        return try store(consume items, report: report, in: vault, context)
    }

    /// `--from secret-service`: every item of the keyring on the session bus (SPEC.md §17.5).
    private static func importFromSecretService(_ context: CommandContext) throws -> ExitCode {
        let vault = try context.unlockedVault()
        let exported: [SecretServiceExportedItem]
        do {
            exported = try SecretServiceReader.readAll(ownExecutable: OwnExecutable.path)
        } catch {
            throw CLIError("\(error)", hint: "nothing was imported", code: CLIError.from(error).code)
        }
        let (items, report) = try SecretServiceImport.read(exported)
        return try store(items, report: report, in: vault, context)
    }

    private static func store(_ imported: consuming [ImportedItem], report: ImportReport, in vault: Vault, _ context: CommandContext) throws -> ExitCode {
        var report = report
        var items = consume imported  // held once: a million items are gigabytes
        ImportedItem.removeDuplicates(&items, existing: try vault.allRecords(), report: &report)
        // Ctrl-C from the report on stops the import where nothing is half written, and says so
        // (SPEC.md §12); an interrupt after the commit point is told, the items being in.
        let (imported, signal): (Bool, Int32?)
        do {
            (imported, signal) = try Interruption.catching { isInterrupted -> Bool in
                for line in report.lines(items: items) { context.note(line) }
                if context.arguments.has("dry-run") {
                    context.note("dry run: would import \(items.count) item\(items.count == 1 ? "" : "s"); nothing was written")
                    return false
                }
                let progress = ProgressLine(io: context.io, label: "importing", enabled: !context.wantsJSON)
                defer { progress.finish() }
                let ids = try vault.addReturningIdentifiers(
                    items.lazy.map(\.draft), progress: { done, total in progress.update(done, of: total) }, isInterrupted: isInterrupted)
                // The items' files, each sealed as it is attached (SPEC.md §6.7).
                for (id, item) in zip(ids, items) {
                    for file in item.attachments {
                        var offset = 0
                        try vault.attach(name: file.name, mediaType: file.mediaType, to: id, limit: UInt64.max) { buffer in
                            let count = min(buffer.count, file.content.count - offset)
                            buffer.copyBytes(from: file.content[offset..<offset + count])
                            offset += count
                            return count
                        }
                    }
                }
                return true
            }
        } catch VaultError.interrupted {
            throw CLIError("interrupted: nothing was imported", code: .interrupted)
        }
        guard imported else { return .success }
        context.note("imported \(items.count) item\(items.count == 1 ? "" : "s")"
            + (signal == nil ? "" : " (the interrupt came after they were written)"))
        items = []  // the items' memory goes back before the tables are built beside it
        // Best effort: a table left as it was is built by the next list instead.
        try? vault.identityStore.prepareListings()
        return .success
    }
}
