import Coffer
import CofferTerminalKit

struct SearchCommand: Command {
    static let name = "search"
    static let aliases = ["find"]
    static let summary = "find identities whose service or user contains TEXT"
    static let usage = "search TEXT [--json]"
    static let discussion = """
        Case-insensitive substring search over service identifiers, user names, item names and,
        while the vault is unlocked, tags — yours and your teams'. Works while locked like 'list'
        (tags are sealed inside the items, so a locked search reads names only).
        """
    static let examples = ["coffer search github", "coffer search alice --json"]
    static let options: [OptionSpec] = [.flag("json", "print a JSON array of identities")]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let text = try context.positionals(1...1, names: "TEXT")[0].lowercased()
        var searchedTags = true
        func matching(_ store: CredentialIdentityStore) throws -> IdentityListing {
            let listing = try store.identityListing(order: .service)
            // Tags live in the sealed records only: read while the vault is unlocked.
            let tagged: Set<RecordID>
            if store.vault.isUnlocked {
                tagged = Set(try store.vault.allRecords().filter { $0.tags.contains { $0.lowercased().contains(text) } }.map(\.id))
            } else {
                (tagged, searchedTags) = ([], false)
            }
            return listing.filter { row in
                tagged.contains(row.recordID)
                    || listing.withUserBytes(of: row) { $0.containsLowercased(text) }
                    || listing.withIdentifierBytes(of: row) { $0.containsLowercased(text) }
                    || listing.withUnsafeText { $0[row.name].withContiguousStorageIfAvailable { $0.containsLowercased(text) } ?? false }
            }
        }
        let found = try context.readingStore(matching)
        let teams = context.teamListings(matching)
        guard found.count > 0 || teams.contains(where: { $0.listing.count > 0 }) || context.wantsJSON else {
            throw CLIError("nothing matches '\(text)'", hint: searchedTags ? nil : "tags are searched while the vault is unlocked ('coffer unlock')",
                           code: .noInput)
        }
        context.printIdentities(found, teams: teams)
        return .success
    }
}
