import CofferProvider
import CofferHostKit
import CofferAudit
import CofferTeams

/// The vault page's requests (SPEC.md §13.7): the whole vault and each team's, listed by name
/// while locked as `coffer list` is; an item's members, its code, a save and a delete through
/// pinentry when locked, with the library's rules and an edit written only over the revision the
/// page read. The service worker takes these from the extension's own pages only.
extension BrowserHost {
    /// At most this many tags are named to the page's filter (in order, case-insensitively).
    static let maximumListedTags = 1_000

    /// A page of the list: `total` rows match; `items` are rows `offset..<offset+limit`; the
    /// first page also names every tag of the vaults asked for (what the tag filter offers).
    /// `changeToken` is `hello`'s, read before the tables: the rows are at least that recent,
    /// so a page that compares it with later `hello`s misses no change made after the list.
    func vaultItems(_ query: VaultPageQuery, in personal: Vault) throws -> JSONObject {
        var matched: [(vault: String?, table: VaultPageTable, rows: [Int])] = []
        var namesLocked = false
        pageTablesUsed = .now  // the page asked: its tables are kept a while longer
        let teams = teams(of: personal)
        let token = changeToken(of: personal, teams: teams)
        for (name, vault) in [(String?.none, personal)] + teams.map({ (String?.some($0.name), $0.vault) }) {
            if let wanted = query.vault, wanted != (name ?? "") { continue }
            guard let table = try pageTable(of: vault, named: name ?? "") else {
                namesLocked = namesLocked || name == nil
                continue
            }
            matched.append((name, table, table.matching(query.text, kind: query.kind, tag: query.tag, order: query.order)))
        }
        let total = matched.reduce(0) { $0 + $1.rows.count }
        var page: [JSONValue] = []
        // One vault (the usual case) is paged as it is; several are merged first.
        let listed = matched.count == 1 ? matched[0].rows.dropFirst(query.offset).prefix(query.limit).map { (matched[0].vault, matched[0].table, $0) }
            : Array(Self.merged(matched, order: query.order).dropFirst(query.offset).prefix(query.limit))
        for (vault, table, index) in listed {
            let row = table.row(index)
            page.append([
                "recordIdentifier": .string(row.recordID.hex), "vault": vault.map { .string($0) } ?? .null, "kind": .string(row.kind.rawValue),
                "title": .string(table.title(index)), "name": .string(table.name(index)), "user": .string(table.user(index)),
                "site": .string(table.site(index)), "tags": .array(table.tags(index).map(JSONValue.string)),
                "modified": row.modified == 0 ? .null : .integer(row.modified),
            ])
        }
        var answer: JSONObject = [
            "items": .array(page), "total": .integer(total), "offset": .integer(query.offset),
            "teams": .array(teams.map { .string($0.name) }),
            "locked": .bool(!session.isUnlocked(personal)), "namesLocked": .bool(namesLocked),
            "changeToken": token.map { .string(Base64.encode($0)) } ?? .null,
        ]
        if query.offset == 0 {
            let tags = matched.reduce(into: Set<String>()) { $0.formUnion($1.table.allTags) }
            answer["tags"] = .array(tags.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }.prefix(Self.maximumListedTags).map(JSONValue.string))
        }
        return answer
    }

    /// Every member of one item, and what the audit finds of it.
    func vaultItem(_ reference: VaultPageReference, in personal: Vault) throws -> JSONObject {
        let vault = try unlocked(reference.vault, personal, reason: "to open an item")
        guard let record = try existing(reference.id, in: vault) else { throw BrowserHostError.notFound }
        return ["item": .object(VaultPageItem.json(record, vault: reference.vault, pages: changePasswordPages))]
    }

    /// The item's one-time code now: what `coffer otp` prints at this moment.
    func vaultCode(_ reference: VaultPageReference, in personal: Vault) throws -> JSONObject {
        let vault = try unlocked(reference.vault, personal, reason: "to show a one-time code")
        let code: OneTimeCode
        do {
            code = try vault.oneTimeCode(forRecordWithID: reference.id)
        } catch {
            switch error {
            case .recordNotFound, .noOneTimeCode: throw BrowserHostError.notFound
            default: throw error
            }
        }
        return ["code": .string(code.code), "period": code.period.map { .integer($0) } ?? .null, "remaining": code.remaining.map { .integer($0) } ?? .null]
    }

    /// A new item, or an edit written only over the revision the page read (else `conflict`,
    /// carrying the item as it is now, and nothing written).
    func vaultSave(_ content: ItemContent, vault name: String?, edit: VaultPageEdit?, in personal: Vault) throws -> JSONObject {
        let vault = try unlocked(name, personal, reason: edit == nil ? "to add an item" : "to save an item")
        let record: Record
        do {
            if let edit {
                record = try vault.updateItem(withID: edit.id, to: content, ifRevision: edit.revision)
            } else {
                record = try vault.addItem(content)
            }
        } catch {
            switch error {
            case .editConflict(let id, _, _): throw try conflict(id, vault: name, in: vault)
            case .recordNotFound: throw BrowserHostError.notFound
            case .invalidInput(let reason): throw BrowserHostError.invalid(member: "item", reason)
            default: throw error
            }
        }
        return ["recordIdentifier": .string(record.id.hex), "revision": .integer(record.revision), "vault": name.map { .string($0) } ?? .null]
    }

    /// Removes an item if it is still at `revision` (else `conflict`, nothing removed).
    func vaultDelete(_ reference: VaultPageReference, revision: UInt64, in personal: Vault) throws -> JSONObject {
        let vault = try unlocked(reference.vault, personal, reason: "to delete an item")
        do {
            try vault.deleteRecord(withID: reference.id, ifRevision: revision)
        } catch {
            switch error {
            case .editConflict(let id, _, _): throw try conflict(id, vault: reference.vault, in: vault)
            case .recordNotFound: throw BrowserHostError.notFound
            default: throw error
            }
        }
        return ["deleted": true]
    }

    /// What `coffer audit` finds in one's vault and teams (weak, reused, old, insecure, exposed,
    /// unused), each with its item and its change-password page; breaches only when asked, by
    /// the range API (`$COFFER_HIBP_URL`, else HIBP's): five hex digits of a hash leave the machine.
    func vaultAudit(breaches: Bool, in personal: Vault) throws -> JSONObject {
        try unlock(personal, reason: "to audit your vault")
        var audited: [VaultAudit.Team] = [], leftOut: [JSONValue] = []
        for team in teams(of: personal) {
            guard (try? unlockedTeam(team.vault, of: personal)) != nil, let members = try? team.vault.teamMembership(),
                  let stored = try? team.vault.allRecords()
            else {
                leftOut.append(.string(team.name))
                continue
            }
            audited.append(VaultAudit.Team(name: team.name, records: stored, membership: members))
        }
        let environment = session.environment
        let base = environment["COFFER_HIBP_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? BreachCheck.defaultURL
        let (audit, teamOf): (VaultAudit, [RecordID: String])
        do {
            (audit, teamOf) = try VaultAudit.ofVaults(
                own: try personal.allRecords(), teams: audited, quirks: session.webQuirks, breaches: breaches ? .rangeAPI(base: base) : nil,
                environment: environment)
        } catch {
            throw BrowserHostError.unavailable("\(error)")
        }
        return [
            "checked": .integer(audit.checked), "breachCheck": .bool(breaches), "teamsLeftOut": .array(leftOut),
            "findings": .array(audit.findings.map { finding in
                [
                    "kind": .string(finding.kind.rawValue), "recordIdentifier": .string(finding.recordID.hex),
                    "vault": teamOf[finding.recordID].map { .string($0) } ?? .null, "title": .string(finding.title),
                    "detail": .string(finding.detail), "changePasswordURL": finding.changePasswordURL.map { .string($0) } ?? .null,
                ]
            }),
        ]
    }

    // MARK: Internals

    /// The `conflict` failure, with the item as it is now for the page to show beside its own.
    private func conflict(_ id: RecordID, vault name: String?, in vault: Vault) throws -> BrowserHostError {
        .conflict(current: try existing(id, in: vault).map { VaultPageItem.json($0, vault: name, pages: changePasswordPages) })
    }

    /// The vault `name` names (nil or `""`, as the list names it: one's own), unlocked: one's
    /// own through pinentry when locked; a team through one's own (its key is sealed to the member).
    /// One's own vault (`name` nil or `""`) or a team's, unlocked: pinentry for one's own, then
    /// the team's key through one's identity.
    func unlocked(_ name: String?, _ personal: Vault, reason: String) throws -> Vault {
        try unlock(personal, reason: reason)
        guard let name, !name.isEmpty else { return personal }
        guard let team = teams(of: personal).first(where: { $0.name == name })?.vault else { throw BrowserHostError.notFound }
        return try unlockedTeam(team, of: personal)
    }

    /// `team` unlocked through one's own unlocked vault (the team's key is sealed to the member).
    private func unlockedTeam(_ team: Vault, of personal: Vault) throws -> Vault {
        if !team.isUnlocked { try team.unlockTeam(identity: personal.personalIdentity()) }
        return team
    }

    /// Where passwords are changed: the web's published pages, else `.well-known` (SPEC.md §12.2).
    var changePasswordPages: ChangePasswordPages {
        (try? session.webQuirks?.changePasswordPages()) ?? .wellKnownOnly
    }

    // MARK: Kept current between requests

    /// How long, in milliseconds, the host waits after a request before it builds one's own
    /// table unasked: a page's burst of requests comes first.
    static let firstTablePause: Int32 = 100
    /// How long, in milliseconds, a vault must have made no commit before its table is built
    /// again unasked.
    static let quietAfterCommit: Int32 = 250

    /// Returns when a request can be read on `fd`. Meanwhile: at the host's first pause, it
    /// builds one's own vault's table (names only, never unlocking), so the vault page opened
    /// later finds it ready; after that, when a vault whose table it keeps has committed (its
    /// index manifest written, seen through inotify) and then been quiet for 250 ms, it builds
    /// that table again. Tables the page has not asked for in `pageTablesKept` are let go (the
    /// host runs as long as the browser: at a million items a table is about 150 MB). While
    /// nothing is written and no table is kept it sleeps: no timer wakes it.
    func waitForRequest(on fd: Int32) {
        if !preparedFirstTable && !Descriptor.waitReadable(fd, milliseconds: Self.firstTablePause) {
            preparedFirstTable = true
            if let personal = try? session.openVaultWithoutUse() { _ = try? pageTable(of: personal, named: "", unlocking: false) }
            pageTablesUsed = .now
        }
        var committed = false
        while let watch = indexWatch?.watch {
            let keptFor = Self.milliseconds(pageTablesUsed + pageTablesKept - .now)
            if keptFor <= 0 {
                pageTables = [:]
                indexWatch = nil  // its descriptor closed: a commit no longer wakes the host
                return
            }
            // After a commit, the tables are built once the vault has been quiet for a moment:
            // a script's thousand adds or a sync's run of commits is one rebuild, not a thousand.
            let ready = Descriptor.waitReadable([fd, watch.fd], milliseconds: committed ? min(Self.quietAfterCommit, keptFor) : keptFor)
            if ready[0] { return }
            if ready[1] {
                if watch.drain().contains(IdentityIndex.manifestName) { committed = true }
            } else if committed {
                committed = false
                refreshPageTables()
            }
        }
    }

    /// A duration as whole milliseconds for `poll`, at least 0 and at most a day.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: max(0, min(86_400_000, seconds * 1000 + attoseconds / 1_000_000_000_000_000)))
    }

    /// Builds again, between requests, each kept page table whose vault changed since (an
    /// import, a sync, an edit elsewhere), so the page opened next shows its rows at once
    /// instead of waiting for a table of every item (SPEC.md §13.7). A vault that can be read
    /// now only by unlocking it (its store disabled here) keeps its table until the page asks.
    func refreshPageTables() {
        guard let personal = try? session.openVaultWithoutUse() else { return }
        let teams = teams(of: personal)
        for name in Array(pageTables.keys) {
            guard let vault = name.isEmpty ? personal : teams.first(where: { $0.name == name })?.vault else {
                pageTables[name] = nil  // a team left
                continue
            }
            _ = try? pageTable(of: vault, named: name, unlocking: false)
        }
    }

    /// The page's table of `vault`, rebuilt only when its identity store changed; nil when its
    /// names may not be read now: locked, suggestions off on this device, and no session to
    /// unlock it from (or `unlocking` false: the work between requests never unlocks).
    private func pageTable(of vault: Vault, named name: String, unlocking: Bool = true) throws -> VaultPageTable? {
        let store = vault.identityStore
        if !store.state.isEnabled && !vault.isUnlocked && !(unlocking && session.unlockFromSession(vault, asUse: false)) { return nil }
        var token = try store.changeToken()
        if let kept = pageTables[name], token != nil, kept.token == token { return kept }
        // The page filters by tag and sorts by date: an index an older Coffer wrote files
        // neither, and is rewritten first while the vault key is at hand (SPEC.md §7.3). The
        // token is read before the listing, never after: a commit in between would otherwise
        // stamp rows older than it with its token, and they would be kept.
        if vault.isUnlocked, (try? vault.indexFilesItemDetails()) != nil { token = try store.changeToken() }
        let table = VaultPageTable(try store.identityListing(order: .service), token: token)
        pageTables[name] = table
        watchIndex(of: vault)
        return table
    }

    /// Adds `vault`'s index directory to the watched ones.
    private func watchIndex(of vault: Vault) {
        let directory = vault.container.indexDirectory
        let directories = indexWatch?.directories ?? []
        guard !directories.contains(directory) else { return }
        if let watch = DirectoryWatch(directories + [directory]) { indexWatch = (directories + [directory], watch) }
    }

    /// The vaults' matched rows as one list in `order` (each vault's already is).
    private static func merged(_ lists: [(vault: String?, table: VaultPageTable, rows: [Int])], order: VaultPageTable.Order)
        -> [(vault: String?, table: VaultPageTable, row: Int)]
    {
        var merged: [(vault: String?, table: VaultPageTable, row: Int)] = []
        for list in lists {
            let next = list.rows.map { (vault: list.vault, table: list.table, row: $0) }
            guard !merged.isEmpty else {
                merged = next
                continue
            }
            func precedes(_ a: (vault: String?, table: VaultPageTable, row: Int), _ b: (vault: String?, table: VaultPageTable, row: Int)) -> Bool {
                a.table.precedes(a.row, b.row, of: b.table, in: order)
            }
            var combined: [(vault: String?, table: VaultPageTable, row: Int)] = []
            combined.reserveCapacity(merged.count + next.count)
            var (i, j) = (0, 0)
            while i < merged.count || j < next.count {
                if j == next.count || (i < merged.count && !precedes(next[j], merged[i])) {
                    combined.append(merged[i])
                    i += 1
                } else {
                    combined.append(next[j])
                    j += 1
                }
            }
            merged = combined
        }
        return merged
    }
}
