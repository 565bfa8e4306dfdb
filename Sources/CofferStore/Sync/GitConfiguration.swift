import CofferFormat
/// `.git/config` as Coffer owns it (SPEC.md §15.1).
///
/// The container is untrusted (SPEC.md §2): whoever can write it can write `.git/config`, and
/// git obeys keys there that run programs (`core.sshCommand`, `remote.origin.uploadpack`,
/// `credential.helper`, `core.askPass`, `protocol.ext.allow` with an `ext::` URL, `include.path`
/// to a file that does…). Overriding each such key on the command line is a list that is never
/// complete. So Coffer writes the whole file itself, pins the remote URL in this device's state,
/// and before git runs compares the file with what it wrote: any other byte is refused (65)
/// naming the key, and git never reads it. `.git/commondir` and `objects/info/alternates` (which
/// point git at directories outside the container) are refused the same way.
///
/// Pure: text in, text or a finding out; `Git` does the reading.
enum GitConfiguration {
    /// The file Coffer writes for a repository whose remote `origin` is `remote`.
    static func render(remote: String?) -> String {
        var text = """
            [core]
            \trepositoryformatversion = 0
            \tfilemode = true
            \tbare = false
            \tlogallrefupdates = false
            \tsharedrepository = 0600

            """
        if let remote {
            text += "[remote \"origin\"]\n\turl = \(quoted(remote))\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
        }
        return text
    }

    /// A value as git's config syntax needs it: quoted, with `\` and `"` escaped, when it holds
    /// anything git would read otherwise (a comment character, a backslash, a quote, outer space).
    static func quoted(_ value: String) -> String {
        let special = value.contains { "\\\";#".contains($0) } || value.first == " " || value.last == " "
        guard special else { return value }
        return "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// What a config file Coffer did not write (or that was changed) holds.
    enum Finding: Equatable {
        /// Only what git itself writes on `init` and `remote add`: adoptable, with this remote.
        case plain(remote: String?)
        /// A key Coffer does not write, or a line it cannot read as git's own: refused.
        case foreign(key: String)
    }

    /// Reads `text` as the simple form `git init` and `git remote add` write (sections, then
    /// tab-indented `key = value` lines with unquoted values), and says whether it holds only
    /// their keys. Anything else — another key, another remote, a quoted or continued value, a
    /// comment — is foreign: an honest repository of Coffer's never has it.
    static func inspect(_ text: String) -> Finding {
        var section = ""
        var remote: String?
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmingSpaces()
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { return .foreign(key: String(line.prefix(40))) }
                let name = line.dropFirst().dropLast()
                switch name.lowercased() {
                case "core": section = "core"
                case "receive": section = "receive"
                case "remote \"origin\"": section = "remote.origin"
                default: return .foreign(key: String(name.prefix(40)))
                }
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces() }
            guard parts.count == 2, !parts[0].isEmpty, !section.isEmpty else { return .foreign(key: String(line.prefix(40))) }
            let key = section + "." + parts[0].lowercased(), value = parts[1]
            guard !value.contains(where: { "\\\";#".contains($0) }) else { return .foreign(key: key) }
            switch (key, value) {
            case ("core.repositoryformatversion", "0"), ("core.filemode", "true"), ("core.filemode", "false"),
                 ("core.bare", "false"), ("core.logallrefupdates", "true"), ("core.logallrefupdates", "false"),
                 ("core.sharedrepository", "0600"), ("receive.denynonfastforwards", "true"), ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"):
                continue
            case ("remote.origin.url", _) where remote == nil && !value.isEmpty:
                remote = value
            default:
                return .foreign(key: key)
            }
        }
        return .plain(remote: remote)
    }

    /// The first key of `actual` that is not in Coffer's own file for `remote` (to name it in
    /// the refusal); `remote.origin.url` when only the URL differs.
    static func firstForeignKey(_ actual: String, expectedRemote remote: String?) -> String {
        switch inspect(actual) {
        case .foreign(let key): key
        case .plain(let found) where found != remote: "remote.origin.url"
        case .plain: "the file's layout"
        }
    }
}
