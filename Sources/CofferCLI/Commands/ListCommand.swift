import Coffer

struct ListCommand: Command {
    static let name = "list"
    static let aliases = ["ls"]
    static let summary = "list credential identities (never passwords)"
    static let usage = "list [SERVICE] [--json]"
    static let discussion = """
        Lists the identities the provider would suggest: service, user and id, best match first
        when SERVICE is given. Works while the vault is locked when the identity store is enabled
        on this device (as iOS's QuickType bar does); otherwise the master password is needed.
        """
    static let examples = ["coffer list", "coffer list https://github.com/login", "coffer list --json | jq -r '.[].user'"]
    static let options: [OptionSpec] = [.flag("json", "print a JSON array of identities")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "SERVICE")
        let request = operands.map(CredentialServiceIdentifier.init(parsing:))
        let identities = try context.identities(for: request).map { $0.identity }
        if request.count == 1 && identities.isEmpty && !context.wantsJSON {
            throw CLIError("no credential for \(operands[0])", code: .noInput)
        }
        context.printIdentities(identities)
        return .success
    }
}

struct SearchCommand: Command {
    static let name = "search"
    static let aliases = ["find"]
    static let summary = "find identities whose service or user contains TEXT"
    static let usage = "search TEXT [--json]"
    static let discussion = "Case-insensitive substring search over service identifiers and user names. Works while locked like 'list'."
    static let examples = ["coffer search github", "coffer search alice --json"]
    static let options: [OptionSpec] = [.flag("json", "print a JSON array of identities")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let text = try context.positionals(1...1, names: "TEXT")[0].lowercased()
        let found = try context.identities(for: []).map { $0.identity }.filter {
            $0.user.containsLowercased(text) || $0.serviceIdentifier.identifier.containsLowercased(text)
        }
        guard !found.isEmpty || context.wantsJSON else { throw CLIError("nothing matches '\(text)'", code: .noInput) }
        context.printIdentities(found)
        return .success
    }
}

extension CommandContext {
    /// Identities from the store: locked through this device's index key when the store is
    /// enabled, else after unlocking with the master password.
    func identities(for request: [CredentialServiceIdentifier]) throws -> [RankedIdentity] {
        let vault = try sessionVault(requireUnlocked: false)
        do {
            return try vault.identityStore.credentialIdentities(for: request)
        } catch CredentialIdentityStoreError.storeDisabled {
            try unlock(vault)
            return try vault.identityStore.credentialIdentities(for: request)
        }
    }

    func printIdentities(_ identities: [PasswordCredentialIdentity]) {
        if wantsJSON {
            print(JSONOutput.render(.array(identities.map(JSONOutput.identity))))
            return
        }
        // Columns by Unicode scalars (UTF-8 lead bytes): cheap, and right for the ASCII that
        // fills most lists. Counted once per cell.
        func columns(_ text: String) -> Int {
            var text = text
            return text.withUTF8 { bytes in
                var continuations = 0
                for byte in bytes { continuations &+= Int(byte >> 6 == 0b10 ? 1 : 0) }
                return bytes.count - continuations
            }
        }
        var serviceColumns: [Int] = [], userColumns: [Int] = []
        serviceColumns.reserveCapacity(identities.count)
        userColumns.reserveCapacity(identities.count)
        for identity in identities {  // a loop, not key paths: those are slow in hot code
            serviceColumns.append(columns(identity.serviceIdentifier.identifier))
            userColumns.append(columns(identity.user))
        }
        let width = min(serviceColumns.max() ?? 0, 40), userWidth = min(userColumns.max() ?? 0, 24)
        // One buffer and one write for the whole list: 10,000 lines are 10,000 system calls otherwise.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(identities.count * 80)
        func append(_ text: String, columns: Int, paddedTo width: Int) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
            for _ in 0..<(max(0, width - columns) + 2) { bytes.append(UInt8(ascii: " ")) }
        }
        for (position, identity) in identities.enumerated() {
            append(identity.serviceIdentifier.identifier, columns: serviceColumns[position], paddedTo: width)
            append(identity.user, columns: userColumns[position], paddedTo: userWidth)
            var id = identity.recordIdentifier
            id.withUTF8 { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\n"))
        }
        let output = String(decoding: bytes, as: UTF8.self)
        io.standardOutput(output)
    }
}

extension String {
    /// Whether the lower-cased string contains `needle` (already lower-cased). ASCII text, which
    /// is nearly every service and user name, is compared byte by byte without allocating.
    /// Every string contains the empty string (the overloads of `contains` disagree on that).
    func containsLowercased(_ needle: String) -> Bool {
        guard !needle.isEmpty else { return true }
        var (haystack, needle) = (self, needle)
        let answer: Bool? = haystack.withUTF8 { text in
            needle.withUTF8 { pattern -> Bool? in
                guard text.allSatisfy({ $0 < 0x80 }), pattern.allSatisfy({ $0 < 0x80 }) else { return nil }
                guard pattern.count <= text.count else { return false }
                func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
                for start in 0...(text.count - pattern.count) {
                    var position = 0
                    while position < pattern.count, lower(text[start + position]) == pattern[position] { position += 1 }
                    if position == pattern.count { return true }
                }
                return false
            }
        }
        return answer ?? haystack.lowercased().contains(needle)
    }
}
