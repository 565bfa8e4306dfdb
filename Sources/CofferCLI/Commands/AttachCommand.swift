import Coffer
import CofferTerminalKit
import FoundationEssentials

/// `coffer attach ENTRY FILE…`: files an item carries (SPEC.md §6.7), sealed as they are read.
struct AttachCommand: Command {
    static let name = "attach"
    static let changesVault = true
    static let summary = "add files to an item (sealed, synced, backed up with it)"
    static let usage = "attach ENTRY FILE... [--name NAME] [--type MEDIA-TYPE]"
    static let discussion = """
        Each FILE is read and sealed in pieces (any size streams through in constant memory) and
        kept with the item under its file name, or NAME (one FILE only). FILE must be a regular
        file: a link, a directory or a FIFO is refused. A file may be at most 100 MiB unless
        COFFER_ATTACHMENT_LIMIT says more (e.g. 2G, 500M, in bytes without a suffix). The media type is
        guessed from the name's extension unless --type gives it. 'coffer attachment' lists, saves
        and removes them; 'coffer show' names them.
        """
    static let examples = ["coffer attach GitHub recovery-codes.pdf", "coffer attach 'Home server' id_ed25519.pub ssh_config --type text/plain"]
    static let options: [OptionSpec] = [
        .value("name", "the name to keep the file under (default: its file name)"),
        .value("type", "its media type (default: guessed from the extension)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(2...(Attachment.maximumPerItem + 1), names: "ENTRY FILE...")
        let files = Array(operands.dropFirst())
        let name = context.arguments.value("name")
        guard name == nil || files.count == 1 else { throw UsageError("--name names one file; attach the others on their own") }
        let limit = try Self.limit(context.io.environment)
        // Every file is checked before anything is stored.
        var opened: [(path: String, name: String, file: OpenedFile)] = []
        for path in files {
            let file: OpenedFile
            do { file = try FileSystem.standard.openUserFileNoLink(path) } catch {
                throw CLIError("cannot attach \(path): \(Self.describe(error))", code: .noInput)
            }
            guard UInt64(file.size) <= limit else {
                throw CLIError("\(path) is \(Attachment.describe(size: UInt64(file.size))), over the limit of \(Attachment.describe(size: limit)) per attachment",
                               hint: "COFFER_ATTACHMENT_LIMIT raises it (e.g. COFFER_ATTACHMENT_LIMIT=2G)", code: .usage)
            }
            opened.append((path, name ?? FileSystem.lastComponent(of: path), file))
        }
        let entry = context.scoped(operands[0])  // first: `TEAM:ENTRY` says which vault opens
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(entry, in: vault, context: context)
        for (path, attachmentName, file) in opened {
            var offset = 0
            let attachment = try vault.attach(
                name: attachmentName, mediaType: context.arguments.value("type") ?? Attachment.mediaType(guessedFrom: attachmentName, path), to: id, limit: limit
            ) { buffer in
                let count = try file.read(into: buffer, at: offset)
                offset += count
                return count
            }
            context.note("attached \(path) as '\(attachment.name)' (\(Attachment.describe(size: attachment.size)), \(attachment.mediaType))")
        }
        return .success
    }

    /// The largest file taken: `COFFER_ATTACHMENT_LIMIT` (bytes, or with K, M, G), else 100 MiB.
    static func limit(_ environment: Environment) throws -> UInt64 {
        guard let text = environment["COFFER_ATTACHMENT_LIMIT"], !text.isEmpty else { return Vault.defaultAttachmentLimit }
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let unit = text.last.flatMap { units[Character($0.uppercased())] }
        guard let number = UInt64(unit == nil ? text : String(text.dropLast())), number > 0 else {
            throw UsageError("COFFER_ATTACHMENT_LIMIT is '\(text)'; expected a size such as 2G, 500M or 1048576")
        }
        return number * (unit ?? 1)
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case StorageError.symbolicLink: "it is a symbolic link; name the file it points to"
        case StorageError.wrongFileType: "it is not a regular file (a directory, a FIFO or a device)"
        case let storage as StorageError where storage.isNotFound: "no such file"
        default: "\(error)"
        }
    }
}
