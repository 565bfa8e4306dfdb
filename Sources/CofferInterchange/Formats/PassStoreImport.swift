import CofferProvider

/// A pass store (passwordstore.org): a directory tree of `.gpg` files, each decrypted with the
/// `gpg` binary (the user's agent and keys, as `pass show` uses them). pass's conventions, as
/// browserpass and gopass read them: the password on line 1; `user:`, `login:` or `username:` the
/// user; `url:`, `website:` or `site:` the service; an `otpauth://` line the one-time code (pass-otp);
/// other `key: value` lines custom fields; the rest notes. The path is the name; a file name that
/// looks like a host is the site, and under a directory that does (`github.com/alice.gpg`) the
/// file name is the user. The directories above become a tag.
enum PassStoreImport {
    static let maximumEntryLength = 1 << 20
    static let userKeys = ["user", "login", "username"]
    static let urlKeys = ["url", "website", "site"]

    static func read(_ store: Directory, environment: Environment) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: .pass)
        var files: [[String]] = []
        try collect(store, path: [], into: &files)
        var items: [ImportedItem] = []
        for path in files.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let origin = path.joined(separator: "/")
            let plaintext = try decrypt(store.path + "/" + origin, origin: origin, environment: environment)
            guard let text = String(validating: plaintext, as: UTF8.self) else { throw .malformed(location: origin, reason: "not UTF-8 text") }
            items.append(try item(text, path: path, origin: origin, report: &report))
        }
        return (items, report)
    }

    /// The `.gpg` files below `directory`, never through a link: a link is refused, since it can
    /// point anywhere outside the store.
    private static func collect(_ directory: Directory, path: [String], into files: inout [[String]]) throws(ImportError) {
        let fileSystem = FileSystem.standard
        do {
            for name in try fileSystem.contents(of: directory).sorted() where !name.hasPrefix(".") {
                guard let info = try fileSystem.status(name, in: directory) else { continue }
                let location = (path + [name]).joined(separator: "/")
                switch info.kind {
                case .symbolicLink: throw ImportError.malformed(location: location, reason: "a symbolic link: refused, it can point outside the store")
                case .directory: try collect(fileSystem.directory(name, in: directory, check: .anyOwner), path: path + [name], into: &files)
                case .regular where name.hasSuffix(".gpg"): files.append(path + [name])
                default: continue
                }
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .malformed(location: directory.path, reason: "\(error)")
        }
    }

    /// gpg's output for one file; gpg's own message is not repeated (it may quote the file).
    private static func decrypt(_ path: String, origin: String, environment: Environment) throws(ImportError) -> [UInt8] {
        do {
            let gpg = try ChildProcess(["gpg", "--batch", "--quiet", "--decrypt", "--", path], environment: environment)
            gpg.closeInput()
            let output = try gpg.readToEnd(limit: maximumEntryLength)
            let status = gpg.wait()
            guard status == 0 else { throw ImportError.programFailed(location: origin, program: "gpg", status: status) }
            return output
        } catch let error as ImportError {
            throw error
        } catch ChildProcessError.launch {
            throw .programMissing(program: "gpg", package: "gnupg")
        } catch {
            throw .malformed(location: origin, reason: "\(error)")
        }
    }

    private static func item(_ text: String, path: [String], origin: String, report: inout ImportReport) throws(ImportError) -> ImportedItem {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        var draft = RecordDraft(serviceIdentifiers: [], user: "", password: lines.first ?? "")
        report.kept("line 1", as: "password", value: draft.password)
        var notes: [String] = []
        for line in lines.dropFirst() {
            if line.lowercased().hasPrefix("otpauth://") {
                if draft.otp == nil {
                    ImportValues.keepOneTimeCode(line, in: &draft, at: origin, report: &report)
                    report.kept("otpauth:// line", as: "one-time code", value: line)
                } else {
                    draft.fields.append(RecordField(name: "otpauth", value: line, hidden: true))
                    report.kept("another otpauth:// line", as: "hidden field", value: line)
                }
                continue
            }
            // `key: value`, but not a bare URL ("https://…") and not a sentence with a colon late in it.
            guard let colon = line.firstIndex(of: ":"), case let head = line[..<colon], !head.isEmpty, head.count <= 32,
                  !line[colon...].hasPrefix("://")
            else {
                notes.append(line)
                continue
            }
            let key = String(line[..<colon]).trimmingSpaces(), value = String(line[line.index(after: colon)...]).trimmingSpaces()
            if userKeys.contains(key.lowercased()), draft.user.isEmpty {
                draft.user = value
                report.kept("\(key.lowercased()): line", as: "user", value: value)
            } else if urlKeys.contains(key.lowercased()) {
                draft.serviceIdentifiers += ImportValues.services([value])
                report.kept("\(key.lowercased()): line", as: "service identifiers", value: value)
            } else {
                draft.fields.append(RecordField(name: key, value: value))
                report.kept("other key: value lines", as: "fields", value: value)
            }
        }
        while notes.last?.isEmpty == true { notes.removeLast() }
        draft.notes = notes.joined(separator: "\n")
        report.kept("other lines", as: "notes", value: draft.notes)
        var components = path
        components[components.count - 1] = String(components[components.count - 1].dropLast(".gpg".count))
        draft.name = components.joined(separator: "/")
        report.kept("path", as: "name", value: draft.name)
        let file = components[components.count - 1], parent = components.count > 1 ? components[components.count - 2] : nil
        var tagParts = Array(components.dropLast())
        if draft.serviceIdentifiers.isEmpty {
            if looksLikeHost(file) {
                draft.serviceIdentifiers = [CredentialServiceIdentifier(parsing: file)]
                report.kept("file name", as: "service identifier", value: file)
            } else if let parent, looksLikeHost(parent) {
                draft.serviceIdentifiers = [CredentialServiceIdentifier(parsing: parent)]
                report.kept("directory name", as: "service identifier", value: parent)
                tagParts.removeLast()
                if draft.user.isEmpty {
                    draft.user = file
                    report.kept("file name under a site", as: "user", value: file)
                }
            }
        }
        if !tagParts.isEmpty {
            draft.tags = [tagParts.joined(separator: "/")]
            report.kept("directories", as: "tag", value: "1")
        }
        return ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin))
    }

    /// `github.com`, `mail.example.co.uk`, `localhost:8080`: a dot or port, no spaces.
    static func looksLikeHost(_ text: String) -> Bool {
        !text.isEmpty && !text.contains(" ") && (text.contains(".") || text.contains(":")) && !text.hasPrefix(".")
            && text.allSatisfy { $0.isLetter || $0.isNumber || ".-:_".contains($0) }
    }
}
