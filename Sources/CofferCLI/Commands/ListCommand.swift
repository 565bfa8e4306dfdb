import Coffer
import CofferTerminalKit

struct ListCommand: Command {
    static let name = "list"
    static let aliases = ["ls"]
    static let summary = "list items and the identities they offer (never passwords)"
    static let usage = "list [SERVICE] [--tag TAG] [--json | --format TEMPLATE]"
    static let discussion = """
        Lists the identities the provider would suggest: service, user and id, best match first
        when SERVICE is given, other hosts of the same site included, then logins saved for sites
        that share their accounts with it (airbnb.com's on airbnb.co.uk, from Apple's
        shared-credentials data). With --json, "match" says how each matched (exact-url, host,
        registrable-domain, shared-credential) and "automaticFill" whether fill would use it
        without asking you.
        Without SERVICE, items that offer no identity (notes, cards, logins without a site) are
        listed by name too, and passkeys by their relying party; --json then gives each row a
        "type": "password", "oneTimeCode", "passkey" or "item". Without SERVICE the list is
        sorted by service (or name), then user, except with --format, which keeps suggestion
        order (scripts and completion sort as they need). --format prints one TEMPLATE per row
        for scripts and launchers: {service}, {user}, {name}, {id}, {kind}, {type} and {path}
        (SERVICE/USER, as ENTRY reads it), with \\t and \\n; a line that comes out empty is left
        out. --tag TAG keeps the items that carry TAG, compared exactly (as the browser's vault
        page filters); from an index an older Coffer wrote, which files no tags, it first asks
        for the password, whose unlock files them. Works while the vault is locked when the
        identity store is enabled on this device (as iOS's QuickType bar does; the index holds
        each item's tags too); otherwise the master password is needed.
        """
    static let examples = [
        "coffer list", "coffer list https://github.com/login", "coffer list --json | jq -r '.[].user'",
        "coffer list --format '{service}\\t{user}\\t{name}\\t{id}'", "coffer list --tag work",
    ]
    static let options: [OptionSpec] = [
        .flag("json", "print a JSON array of identities"), .value("format", "print TEMPLATE per row ({service} {user} {name} {id} {kind} {type} {path})"),
        .value("tag", "only items that carry TAG (compared exactly)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operands = try context.positionals(0...1, names: "SERVICE").map(context.scoped)
        guard let service = operands.first else {
            // --format is for scripts, which sort as they need: best first, as a host sees it.
            let order: IdentityListing.Order = context.arguments.has("format") ? .suggestion : .service
            let listing = try context.readingStore { store in try tagged(store, context, asking: true) { try store.identityListing(order: order) } }
            let teams = context.teamListings { store in try tagged(store, context, asking: false) { try store.identityListing(order: order) } }
            context.printIdentities(listing, teams: teams)
            return .success
        }
        // Then the logins of sites that share their accounts with it (SPEC.md §8.1.1).
        let sharing = try? WebQuirks.installed(environment: context.io.environment)?.sharedCredentials()
        let request = [CredentialServiceIdentifier(parsing: service)]
        let listing = try context.readingStore { store in
            try tagged(store, context, asking: true) { try store.identityListing(for: request, minimumLevel: .sharedCredential, sharing: sharing) }
        }
        let teams = context.teamListings { store in
            try tagged(store, context, asking: false) { try store.identityListing(for: request, minimumLevel: .sharedCredential, sharing: sharing) }
        }
        if listing.count == 0 && teams.allSatisfy({ $0.listing.count == 0 }) && !context.wantsJSON {
            throw CLIError("no credential for \(service)", code: .noInput)
        }
        if context.wantsJSON {
            // Each with how it matched and whether it would fill without a choice (SPEC.md §8.1).
            let rows = listing.rows.map { JSONOutput.identity(listing.rankedIdentity($0)) } + teams.flatMap { team in
                team.listing.rows.map { row -> JSONValue in
                    guard case .object(var object) = JSONOutput.identity(team.listing.rankedIdentity(row)) else { return .null }
                    object["vault"] = .string(team.name)
                    return .object(object)
                }
            }
            context.print(JSONOutput.render(.array(rows)))
        } else {
            context.printIdentities(listing, teams: teams)
        }
        return .success
    }

    /// `list`'s rows of `store`, only those of items that carry `--tag`'s TAG when it is given.
    ///
    /// The tags are those the index files (layout 4, SPEC.md §7.3). An index an older Coffer
    /// wrote files none until the vault key rewrites it: rewritten first when the vault is
    /// unlocked, after the password is asked for when it is not (`asking`: one's own vault; a
    /// team's is left out with the reason), never an empty list that reads as an answer.
    private static func tagged(
        _ store: CredentialIdentityStore, _ context: CommandContext, asking: Bool, _ list: () throws -> IdentityListing
    ) throws -> IdentityListing {
        let listing = try list()  // a store disabled on this device throws here, before any question
        guard let tag = context.arguments.value("tag") else { return listing }
        func unfiled() -> CLIError {
            CLIError("the index of \(store.vault.container.path) was written by an older Coffer and files no tags yet",
                     hint: "run 'coffer unlock' once: the password unlock files them", code: .temporaryFailure)
        }
        var filtered = listing
        if try !store.vault.indexFilesItemDetails() {
            guard asking else { throw unfiled() }
            do { try context.unlock(store.vault) } catch VaultError.locked { throw unfiled() }
            guard try store.vault.indexFilesItemDetails() else { throw unfiled() }
            filtered = try list()
        }
        let bytes = Array(tag.utf8)
        return filtered.filter { filtered.carries($0, tag: bytes) }
    }
}
