import Coffer
import CofferTerminalKit

/// An ENTRY operand, resolved the same way by every command that takes one (docs/cli.md "Naming an
/// entry"), in this order:
///
/// | form | example | how |
/// |---|---|---|
/// | a full id | `3fa1c0…` (32 hex digits) | that record |
/// | an id prefix, 4+ hex digits | `3fa1` | the one ledger shard of its first byte |
/// | `SERVICE/USER` | `github.com/alice` | the identities of SERVICE (host level) with that user |
/// | a name | `GitHub` | the one index bucket of the name, case-insensitively |
/// | a `SERVICE` | `github.com` | what `fill` would fill, else the site's suggestions |
///
/// The first form that matches anything decides. One match is used; several are offered as a
/// numbered list on a terminal, else exit 64 listing them (as rbw does); none is exit 66 with the
/// closest names. Nothing here reads more than a few index buckets.
enum EntryOperand {
    struct Candidate: Equatable {
        let id: RecordID
        let user: String
        let service: String
        let name: String

        var line: String {
            let who = service.isEmpty ? (user.isEmpty ? "-" : user) : (user.isEmpty ? service : "\(user)@\(service)")
            return DisplayText.escaped("\(who)  \(name.isEmpty ? "-" : name)") + "  \(id.hex.prefix(8))"
        }
    }

    static func resolve(_ text: String, in vault: Vault, context: CommandContext? = nil) throws -> RecordID {
        if let id = try? RecordID(hex: text) { return id }
        let candidates: [Candidate]
        do { candidates = try self.candidates(text, store: vault.identityStore) } catch { throw CLIError.from(error) }
        switch candidates.count {
        case 0: throw notFound(text, store: vault.identityStore)
        case 1: return candidates[0].id
        default: return try choose(text, candidates, context: context)
        }
    }

    /// The candidates of the first form that matches anything.
    static func candidates(_ text: String, store: CredentialIdentityStore) throws -> [Candidate] {
        func candidate(_ item: ItemEntry) -> Candidate {
            Candidate(id: item.recordID, user: item.user, service: item.service, name: item.name)
        }
        func candidate(_ ranked: RankedIdentity) throws -> Candidate {
            let id = try RecordID(hex: ranked.identity.recordIdentifier)
            return Candidate(id: id, user: ranked.identity.user, service: ranked.identity.serviceIdentifier.identifier,
                             name: try store.item(for: id)?.name ?? "")
        }
        let lower = text.lowercased()
        if text.utf8.count >= 4, text == lower, text.allSatisfy(\.isHexDigit) {
            let ids = try store.recordIdentifiers(withPrefix: text)
            if !ids.isEmpty {
                return try ids.map { id in try store.item(for: id).map(candidate) ?? Candidate(id: id, user: "", service: "", name: "") }
            }
        }
        if let slash = text.lastIndex(of: "/"), slash != text.startIndex, text.index(after: slash) != text.endIndex {
            let service = CredentialServiceIdentifier(parsing: String(text[..<slash])), user = String(text[text.index(after: slash)...])
            let found = try store.credentialIdentities(for: [service], minimumLevel: .host).filter { $0.identity.user == user }
            if !found.isEmpty { return try unique(found.map(candidate)) }
        }
        let named = try store.items(named: text)
        if !named.isEmpty { return named.map(candidate) }
        let service = CredentialServiceIdentifier(parsing: text)
        let suggestions = try store.credentialIdentities(for: [service])
        let fillable = suggestions.filter(\.allowsAutomaticFill)
        return try unique((fillable.isEmpty ? suggestions : fillable).map(candidate))
    }

    /// One candidate per record (a record listing several matching services is one entry).
    private static func unique(_ candidates: [Candidate]) -> [Candidate] {
        var seen: [RecordID] = []
        return candidates.filter { candidate in
            guard !seen.contains(candidate.id) else { return false }
            seen.append(candidate.id)
            return true
        }
    }

    private static func choose(_ text: String, _ candidates: [Candidate], context: CommandContext?) throws -> RecordID {
        if let terminal = context?.terminal {
            terminal.write("'\(text.prefix(80))' names \(candidates.count) entries:\n")
            for (number, candidate) in candidates.enumerated() { terminal.write("  \(number + 1)) \(candidate.line)\n") }
            if let answer = terminal.readLine(prompt: "Choose 1-\(candidates.count), or Enter to cancel: "), let number = Int(answer),
               candidates.indices.contains(number - 1) {
                return candidates[number - 1].id
            }
            throw CLIError("cancelled", code: .failure)
        }
        let list = candidates.map { "  " + $0.line }.joined(separator: "\n")
        throw CLIError("'\(text.prefix(80))' names \(candidates.count) entries:\n\(list)", hint: "name one by its id (8 digits are enough)", code: .usage)
    }

    private static func notFound(_ text: String, store: CredentialIdentityStore) -> CLIError {
        var known: [String] = []
        if let listing = try? store.identityListing() {
            for row in listing.rows {
                let name = listing.name(row)
                if !name.isEmpty { known.append(name) }
                let identity = listing.identity(row)
                if !identity.serviceIdentifier.identifier.isEmpty { known.append(identity.serviceIdentifier.identifier) }
            }
        }
        let hint = Suggestion.closest(to: text, among: known).map { "did you mean '\($0)'? ('coffer list' shows every entry)" }
            ?? "'coffer list' shows every entry"
        return CLIError("no entry matches '\(text.prefix(80))'", hint: hint, code: .noInput)
    }
}
