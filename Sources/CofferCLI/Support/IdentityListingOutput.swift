import Coffer
import CofferTerminalKit

extension CommandContext {
    /// Identities from the store: locked through this device's index key when the store is
    /// enabled, else after unlocking with the master password.
    func identities(for request: [CredentialServiceIdentifier]) throws -> [RankedIdentity] {
        try readingStore { try $0.credentialIdentities(for: request) }
    }

    /// Every identity (list and search without a service), best first or as a person reads it.
    func identityListing(order: IdentityListing.Order) throws -> IdentityListing {
        try readingStore { try $0.identityListing(order: order) }
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

    /// The listing as a table, `--json` or `--format`, streamed row by row; then each team's
    /// (SPEC.md §16.6), its rows marked `TEAM:` (`"vault"` in JSON, `{vault}` in a template).
    func printIdentities(_ listing: IdentityListing, teams: [(name: String, listing: IdentityListing)] = []) {
        var output = StreamedOutput(io)
        let all = [(name: String?.none, listing: listing)] + teams.map { (name: Optional($0.name), listing: $0.listing) }
        if wantsJSON && arguments.value("format") == nil { output.append("[") }
        for (position, part) in all.enumerated() {
            if let template = arguments.value("format") {
                Self.writeFormatted(part.listing, template: template, vault: part.name, to: &output)
            } else if wantsJSON {
                JSONOutput.writeRows(of: part.listing, vault: part.name, to: &output, first: position == 0 || all[..<position].allSatisfy { $0.listing.rows.isEmpty })
            } else {
                let prefix = part.name.map { Array(($0 + ":").utf8) } ?? []
                part.listing.withUnsafeText { text in Self.writeTable(of: part.listing.rows, in: text, prefix: prefix, to: &output) }
            }
        }
        if wantsJSON && arguments.value("format") == nil { output.append("]\n") }
        output.flush()
    }

    /// Each team's listing beside one's own (`list`, `search`): those whose identities can be
    /// read now — locked through the device's index key, or unlocked. A team that cannot is
    /// named on stderr and left out.
    func teamListings(_ make: (CredentialIdentityStore) throws -> IdentityListing) -> [(name: String, listing: IdentityListing)] {
        guard team == nil, let personal = try? container() else { return [] }
        return teams(ownedBy: personal).compactMap { team in
            unlockFromSession(team.vault)
            do {
                return (team.name, try make(team.vault.identityStore))
            } catch {
                note("team '\(team.name)' is left out: \(CLIError.from(error).message)")
                return nil
            }
        }
    }

    /// `--format`: the template per row (one-time-code rows are the login again and are left
    /// out), escapes `\t` and `\n` read, lines that come out empty dropped. Written byte by byte
    /// from the listing's buffer, as the table is: shell completion runs this on every Tab
    /// (a `String` per placeholder per row took a second at 10,000 entries).
    static func formatted(_ listing: IdentityListing, template: String) -> [UInt8] {
        var output = StreamedOutput()
        writeFormatted(listing, template: template, to: &output)
        return output.bytes
    }

    /// - Parameter vault: a team's name: `{vault}`, and the `TEAM:` that starts its `{path}`.
    static func writeFormatted(_ listing: IdentityListing, template: String, vault: String? = nil, to output: inout StreamedOutput) {
        enum Piece { case literal([UInt8]), service, user, name, id, kind, type, path, vault }
        let vaultBytes = vault.map { Array($0.utf8) } ?? []
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var rest = Substring(template.replacing("\\t", with: "\t").replacing("\\n", with: "\n"))
        let names: [(String, Piece)] = [
            ("{service}", .service), ("{user}", .user), ("{name}", .name), ("{id}", .id), ("{kind}", .kind), ("{type}", .type), ("{path}", .path),
            ("{vault}", .vault),
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
        var line: [UInt8] = []
        func endLine() {
            if line.contains(where: { $0 != 0x20 && $0 != 0x09 }) { output.bytes += line; output.bytes.append(0x0A) }
            line.removeAll(keepingCapacity: true)
        }
        /// A value as it is, or escaped when it holds a control character (SPEC.md §10).
        func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
            if DisplayText.needsEscaping(bytes) { line += DisplayText.escapedBytes(bytes) } else { line += bytes }
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
                    case .service: appendEscaped(service)
                    case .user: appendEscaped(user)
                    case .name: appendEscaped(UnsafeBufferPointer(rebasing: text[row.name]))
                    case .id: line += Array(row.recordID.hex.utf8)
                    case .kind: line += Array(row.kind.rawValue.utf8)
                    case .type: line += Array((row.entry == .item ? "item" : row.entry == .passkey ? "passkey" : "password").utf8)
                    case .vault: line += vaultBytes
                    case .path:
                        // [TEAM:]SERVICE/USER as ENTRY reads it, with a URL's host as the service.
                        guard !service.isEmpty else { break }
                        if !vaultBytes.isEmpty { line += vaultBytes; line.append(0x3A) }
                        appendEscaped(UnsafeBufferPointer(rebasing: text[IdentityListing.hostAndPort(of: row.identifier, in: text)]))
                        if !user.isEmpty { line.append(0x2F); appendEscaped(user) }
                    }
                }
                endLine()
                output.endRow()
            }
        }
    }

    /// Service, user, name (when any row has one) and id columns, one line per row: one pass
    /// for the column widths, one that writes each row's bytes — each on every core, in slices
    /// written out in order (a million rows took 0.3 s on one).
    private static func writeTable(
        of rows: [IdentityListing.Row], in text: UnsafeBufferPointer<UInt8>, prefix: [UInt8] = [], to output: inout StreamedOutput
    ) {
        let sliceLength = 32_768
        let slices = stride(from: 0, to: rows.count, by: sliceLength).map { $0..<min($0 + sliceLength, rows.count) }
        let widths = ((try? concurrentMap(slices.count) { TableFormatter.widths(of: rows[slices[$0]], in: text) }) ?? [])
            .reduce(into: (service: 0, user: 0, name: 0)) { all, one in
                all = (max(all.service, one.service), max(all.user, one.user), max(all.name, one.name))
            }
        let formatter = TableFormatter(text: text, widths: widths, prefix: prefix)
        output.flush()
        var next = 0
        while next < slices.count {
            let batch = Array(slices[next..<min(next + 4, slices.count)])
            next += batch.count
            let pieces = (try? concurrentMap(batch.count) { formatter.lines(of: rows[batch[$0]]) }) ?? []
            for piece in pieces {
                output.bytes += piece
                output.flush()
            }
        }
    }
}

/// The table `coffer list` prints, a slice of rows at a time.
private struct TableFormatter {
    let text: UnsafeBufferPointer<UInt8>
    let widths: (service: Int, user: Int, name: Int)
    let prefix: [UInt8]
    static let limits = (service: 40, user: 24, name: 24)

    /// Columns by Unicode scalars (UTF-8 lead bytes): cheap, and right for the ASCII that fills
    /// most lists. Continuation bytes (0b10xxxxxx) are counted eight at a time.
    static func columns(_ range: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> Int {
        var continuations = 0, position = range.lowerBound
        let base = UnsafeRawPointer(text.baseAddress!)
        while position + 8 <= range.upperBound {
            let word = base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            continuations &+= (word & ~(word << 1) & 0x8080_8080_8080_8080).nonzeroBitCount
            position += 8
        }
        while position < range.upperBound {
            continuations &+= text[position] >> 6 == 0b10 ? 1 : 0
            position += 1
        }
        return range.count - continuations
    }

    /// An item without identities shows its name where an identity shows its service, and a
    /// login its name in a column of its own (the name is how 'coffer show NAME' finds it); a
    /// URL login its host and port (`--json` keeps the URL).
    static func first(_ row: IdentityListing.Row, in text: UnsafeBufferPointer<UInt8>) -> Range<Int> { IdentityListing.firstColumn(of: row, in: text) }
    static func name(_ row: IdentityListing.Row) -> Range<Int> { row.entry == .item ? row.name.lowerBound..<row.name.lowerBound : row.name }

    /// The widths `rows` need, each at most its limit. A login's one-time code is the same item
    /// again: the table lists the item once.
    static func widths(of rows: ArraySlice<IdentityListing.Row>, in text: UnsafeBufferPointer<UInt8>) -> (service: Int, user: Int, name: Int) {
        var widths = (service: 0, user: 0, name: 0)
        for row in rows where row.entry != .oneTimeCode {  // a loop, not key paths: those are slow in hot code
            if widths.service < limits.service { widths.service = max(widths.service, min(columns(first(row, in: text), in: text), limits.service)) }
            if widths.user < limits.user { widths.user = max(widths.user, min(columns(row.user, in: text), limits.user)) }
            if widths.name < limits.name { widths.name = max(widths.name, min(columns(name(row), in: text), limits.name)) }
        }
        return widths
    }

    /// The lines of `rows`.
    func lines(of rows: ArraySlice<IdentityListing.Row>) -> [UInt8] {
        var output = StreamedOutput()
        output.bytes.reserveCapacity(rows.count * 96)
        func cell(_ range: Range<Int>, paddedTo width: Int) {
            let bytes = UnsafeBufferPointer(rebasing: text[range])
            // A name with a control character is written escaped (SPEC.md §10): it cannot drive
            // the terminal or, with a line break, forge a row. Nearly every name has none.
            guard DisplayText.needsEscaping(bytes) else {
                output.append(bytes)
                output.appendSpaces(max(0, width - Self.columns(range, in: text)) + 2)
                return
            }
            let escaped = DisplayText.escapedBytes(bytes)
            output.bytes += escaped
            output.appendSpaces(max(0, width - escaped.count(where: { $0 >> 6 != 0b10 })) + 2)
        }
        var hex = [UInt8](repeating: 0, count: 2 * identifierByteCount)
        for row in rows where row.entry != .oneTimeCode {
            output.bytes += prefix  // a team's `TEAM:`, the same on every row of its table
            cell(Self.first(row, in: text), paddedTo: widths.service)
            cell(row.user, paddedTo: widths.user)
            if widths.name > 0 { cell(Self.name(row), paddedTo: widths.name) }
            hex.withUnsafeMutableBufferPointer { row.recordID.writeHex(to: $0.baseAddress!) }
            output.bytes += hex
            output.bytes.append(0x0A)
        }
        return output.bytes
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
