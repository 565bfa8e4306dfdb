import Coffer

struct ListCommand: Command {
    static let name = "list"
    static let aliases = ["ls"]
    static let summary = "list items and the identities they offer (never passwords)"
    static let usage = "list [SERVICE] [--json | --format TEMPLATE]"
    static let discussion = """
        Lists the identities the provider would suggest: service, user and id, best match first
        when SERVICE is given, other hosts of the same site included, then logins saved for sites
        that share their accounts with it (airbnb.com's on airbnb.co.uk, from Apple's
        shared-credentials data). With --json, "match" says how each matched (exact-url, host,
        registrable-domain, shared-credential) and "automaticFill" whether fill would use it
        without asking you.
        Without SERVICE, items that offer no identity (notes, cards, logins without a site) are
        listed by name too, and passkeys by their relying party; --json then gives each row a
        "type": "password", "oneTimeCode", "passkey" or "item". Without SERVICE the list is sorted by service (or name), then user, except with
        --format, which keeps suggestion order (scripts and completion sort as they need). --format prints
        one TEMPLATE per row for scripts and launchers: {service}, {user}, {name}, {id}, {kind},
        {type} and {path} (SERVICE/USER, as ENTRY reads it), with \\t and \\n; a line that comes
        out empty is left out. Works while the vault is locked when the identity store is enabled
        on this device (as iOS's QuickType bar does); otherwise the master password is needed.
        """
    static let examples = [
        "coffer list", "coffer list https://github.com/login", "coffer list --json | jq -r '.[].user'",
        "coffer list --format '{service}\\t{user}\\t{name}\\t{id}'",
    ]
    static let options: [OptionSpec] = [
        .flag("json", "print a JSON array of identities"), .value("format", "print TEMPLATE per row ({service} {user} {name} {id} {kind} {type} {path})"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "SERVICE")
        guard let service = operands.first else {
            // --format is for scripts and completion, which sort as they need: not sorted here.
            let listing = try context.identityListing()
            context.printIdentities(context.arguments.has("format") ? listing : listing.sortedByService())
            return .success
        }
        // Then the logins of sites that share their accounts with it (SPEC.md §8.1.1).
        let sharing = try? WebQuirks.installed(environment: context.io.environment)?.sharedCredentials()
        let listing = try context.readingStore {
            try $0.identityListing(for: [CredentialServiceIdentifier(parsing: service)], minimumLevel: .sharedCredential, sharing: sharing)
        }
        if listing.count == 0 && !context.wantsJSON {
            throw CLIError("no credential for \(service)", code: .noInput)
        }
        if context.wantsJSON {
            // Each with how it matched and whether it would fill without a choice (SPEC.md §8.1).
            context.print(JSONOutput.render(.array(listing.rows.map { JSONOutput.identity(listing.rankedIdentity($0)) })))
        } else {
            context.printIdentities(listing)
        }
        return .success
    }
}

struct SearchCommand: Command {
    static let name = "search"
    static let aliases = ["find"]
    static let summary = "find identities whose service or user contains TEXT"
    static let usage = "search TEXT [--json]"
    static let discussion = "Case-insensitive substring search over service identifiers, user names and item names. Works while locked like 'list'."
    static let examples = ["coffer search github", "coffer search alice --json"]
    static let options: [OptionSpec] = [.flag("json", "print a JSON array of identities")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let text = try context.positionals(1...1, names: "TEXT")[0].lowercased()
        let listing = try context.identityListing()
        let found = listing.filter { row in
            listing.withUserBytes(of: row) { $0.containsLowercased(text) }
                || listing.withIdentifierBytes(of: row) { $0.containsLowercased(text) }
                || listing.withUnsafeText { $0[row.name].withContiguousStorageIfAvailable { $0.containsLowercased(text) } ?? false }
        }
        guard found.count > 0 || context.wantsJSON else { throw CLIError("nothing matches '\(text)'", code: .noInput) }
        context.printIdentities(found.sortedByService())
        return .success
    }
}

extension CommandContext {
    /// Identities from the store: locked through this device's index key when the store is
    /// enabled, else after unlocking with the master password.
    func identities(for request: [CredentialServiceIdentifier]) throws -> [RankedIdentity] {
        try readingStore { try $0.credentialIdentities(for: request) }
    }

    /// Every identity, best first (list and search without a service).
    func identityListing() throws -> IdentityListing {
        try readingStore { try $0.identityListing() }
    }

    func readingStore<Result>(_ body: (CredentialIdentityStore) throws -> Result) throws -> Result {
        let vault = try sessionVault(requireUnlocked: false)
        do {
            return try body(vault.identityStore)
        } catch CredentialIdentityStoreError.storeDisabled {
            try unlock(vault)
            return try body(vault.identityStore)
        }
    }

    func printIdentities(_ listing: IdentityListing) {
        if let template = arguments.value("format") {
            io.standardOutput(Self.formatted(listing, template: template))
            return
        }
        if wantsJSON {
            print(JSONOutput.render(.array(listing.rows.map { JSONOutput.row($0, of: listing) })))
            return
        }
        // A login's one-time code is the same item again: the table lists the item once.
        let rows = listing.rows.filter { $0.entry != .oneTimeCode }
        let output = listing.withUnsafeText { text in Self.table(of: rows, in: text) }
        io.standardOutput(output)
    }

    /// `--format`: the template per row (one-time-code rows are the login again and are left
    /// out), escapes `\t` and `\n` read, lines that come out empty dropped. Written byte by byte
    /// from the listing's buffer, as the table is: shell completion runs this on every Tab
    /// (a `String` per placeholder per row took a second at 10,000 entries).
    static func formatted(_ listing: IdentityListing, template: String) -> String {
        enum Piece { case literal([UInt8]), service, user, name, id, kind, type, path }
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var rest = Substring(template.replacing("\\t", with: "\t").replacing("\\n", with: "\n"))
        let names: [(String, Piece)] = [
            ("{service}", .service), ("{user}", .user), ("{name}", .name), ("{id}", .id), ("{kind}", .kind), ("{type}", .type), ("{path}", .path),
        ]
        while let first = rest.first {
            if first == "{", let (text, piece) = names.first(where: { rest.hasPrefix($0.0) }) {
                if !literal.isEmpty { pieces.append(.literal(literal)); literal = [] }
                pieces.append(piece)
                rest = rest.dropFirst(text.count)
            } else {
                literal += Array(String(first).utf8)
                rest = rest.dropFirst()
            }
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        var output: [UInt8] = []
        var line: [UInt8] = []
        func endLine() {
            if line.contains(where: { $0 != 0x20 && $0 != 0x09 }) { output += line; output.append(0x0A) }
            line.removeAll(keepingCapacity: true)
        }
        listing.withUnsafeText { text in
            for row in listing.rows where row.entry != .oneTimeCode {
                let service = UnsafeBufferPointer(rebasing: text[row.identifier]), user = UnsafeBufferPointer(rebasing: text[row.user])
                for piece in pieces {
                    switch piece {
                    case .literal(let bytes):
                        for byte in bytes {
                            if byte == 0x0A { endLine() } else { line.append(byte) }
                        }
                    case .service: line += service
                    case .user: line += user
                    case .name: line += UnsafeBufferPointer(rebasing: text[row.name])
                    case .id: line += Array(row.recordID.hex.utf8)
                    case .kind: line += Array(row.kind.rawValue.utf8)
                    case .type: line += Array((row.entry == .item ? "item" : row.entry == .passkey ? "passkey" : "password").utf8)
                    case .path:
                        // SERVICE/USER as ENTRY reads it, with a URL's host as the service.
                        guard !service.isEmpty else { break }
                        line += host(of: service)
                        if !user.isEmpty { line.append(0x2F); line += user }
                    }
                }
                endLine()
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The host and port of `scheme://host[:port]/…`; a domain as it is.
    private static func host(of identifier: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let colon = identifier.firstIndex(of: 0x3A), colon + 2 < identifier.count, identifier[colon + 1] == 0x2F,
              identifier[colon + 2] == 0x2F
        else { return identifier }
        let start = colon + 3
        let end = identifier[start...].firstIndex(where: { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 }) ?? identifier.count
        return UnsafeBufferPointer(rebasing: identifier[start..<end])
    }

    /// Service, user, name (when any row has one) and id columns, one line per row, built in one
    /// string without a closure in the loop (a captured cursor costs a dynamic exclusivity check
    /// per write).
    private static func table(of rows: [IdentityListing.Row], in text: UnsafeBufferPointer<UInt8>) -> String {
        // Columns by Unicode scalars (UTF-8 lead bytes): cheap, and right for the ASCII that
        // fills most lists. Counted once per cell.
        func columns(_ range: Range<Int>) -> Int {
            var continuations = 0
            for byte in UnsafeBufferPointer(rebasing: text[range]) { continuations &+= Int(byte >> 6 == 0b10 ? 1 : 0) }
            return range.count - continuations
        }
        var serviceColumns: [Int] = [], userColumns: [Int] = [], nameColumns: [Int] = []
        serviceColumns.reserveCapacity(rows.count)
        userColumns.reserveCapacity(rows.count)
        nameColumns.reserveCapacity(rows.count)
        var length = 0
        // An item without identities shows its name where an identity shows its service, and
        // a login its name in a column of its own (the name is how 'coffer show NAME' finds it).
        func first(_ row: IdentityListing.Row) -> Range<Int> { row.entry == .item && !row.name.isEmpty ? row.name : row.identifier }
        func name(_ row: IdentityListing.Row) -> Range<Int> { row.entry == .item ? row.name.lowerBound..<row.name.lowerBound : row.name }
        for row in rows {  // a loop, not key paths: those are slow in hot code
            serviceColumns.append(columns(first(row)))
            userColumns.append(columns(row.user))
            nameColumns.append(columns(name(row)))
            length += first(row).count + row.user.count + name(row).count
        }
        let width = min(serviceColumns.max() ?? 0, 40), userWidth = min(userColumns.max() ?? 0, 24)
        let nameWidth = min(nameColumns.max() ?? 0, 24)
        length += rows.count * (width + userWidth + 4 + (nameWidth > 0 ? nameWidth + 2 : 0) + 2 * identifierByteCount + 1)
        // One string, written in place, and one write for the whole list: 10,000 lines are
        // 10,000 system calls otherwise, and each copy of a large list costs page faults.
        guard !rows.isEmpty else { return "" }
        func cell(_ range: Range<Int>, columns: Int, paddedTo width: Int, at cursor: inout UnsafeMutablePointer<UInt8>) {
            cursor.initialize(from: text.baseAddress! + range.lowerBound, count: range.count)
            cursor += range.count
            let padding = max(0, width - columns) + 2
            cursor.initialize(repeating: UInt8(ascii: " "), count: padding)
            cursor += padding
        }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var cursor = buffer.baseAddress!
            for (position, row) in rows.enumerated() {
                cell(first(row), columns: serviceColumns[position], paddedTo: width, at: &cursor)
                cell(row.user, columns: userColumns[position], paddedTo: userWidth, at: &cursor)
                if nameWidth > 0 { cell(name(row), columns: nameColumns[position], paddedTo: nameWidth, at: &cursor) }
                row.recordID.writeHex(to: cursor)
                cursor += 2 * identifierByteCount
                cursor.pointee = UInt8(ascii: "\n")
                cursor += 1
            }
            return cursor - buffer.baseAddress!
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether the lower-cased UTF-8 text contains `needle` (already lower-cased). ASCII text,
    /// nearly every service and user name, is compared byte by byte without allocating.
    /// Every text contains the empty string (the overloads of `contains` disagree on that).
    func containsLowercased(_ needle: String) -> Bool {
        guard !needle.isEmpty else { return true }
        var needle = needle
        let answer: Bool? = needle.withUTF8 { pattern -> Bool? in
            guard allSatisfy({ $0 < 0x80 }), pattern.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard pattern.count <= count else { return false }
            func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
            for start in 0...(count - pattern.count) {
                var position = 0
                while position < pattern.count, lower(self[start + position]) == pattern[position] { position += 1 }
                if position == pattern.count { return true }
            }
            return false
        }
        return answer ?? String(decoding: self, as: UTF8.self).lowercased().contains(needle)
    }
}
