import CofferStore
import CofferFormat
/// Coffer's `ASCredentialIdentityStore`: the identities (service + user, never a password) a
/// host may suggest, kept in the sealed index of one vault.
///
/// The vault updates the store itself whenever a record changes, as an iOS app updates
/// `ASCredentialIdentityStore` after writing its database; these methods are for what an app
/// does on top: ranks, hiding suggestions, rebuilding. Every change is all-or-nothing.
public final class CredentialIdentityStore: Sendable {
    /// Apple's `ASCredentialIdentityStoreState`.
    public struct State: Equatable, Sendable {
        public let isEnabled: Bool
        public let supportsIncrementalUpdates: Bool
    }

    public let vault: Vault

    public init(vault: Vault) {
        self.vault = vault
    }

    /// Enabled means: the user turned the provider on for this device, and the index can be
    /// read while the vault is locked (SPEC.md §7.6).
    public var state: State {
        State(isEnabled: vault.deviceState.providerSetting() == .enabled, supportsIncrementalUpdates: true)
    }

    // MARK: Queries

    /// The identities matching `serviceIdentifiers` (most specific first), best first
    /// (SPEC.md §8.1), one per record, each with its match level and whether the provision rule
    /// lets a host fill it without a person choosing (`allowsAutomaticFill`). Records of match
    /// mode `never` are not suggested. An empty list returns every identity, ordered by rank
    /// and recent use.
    ///
    /// Reads only the buckets of the requested sites (16 per site), never the whole index.
    /// - Parameters:
    ///   - minimumLevel: `.host` (or `.exactURL`) reads only the one bucket of each requested
    ///     host: what a fill needs first, and what keeps its cost flat when thousands of logins
    ///     share one site. `.sharedCredential` adds the logins of sites that share their accounts
    ///     with a requested one, by `sharing` (SPEC.md §8.1.1), after every other match.
    ///   - sharing: which sites share accounts; read only at `.sharedCredential`.
    public func credentialIdentities(
        for serviceIdentifiers: [CredentialServiceIdentifier], minimumLevel: MatchLevel = .registrableDomain,
        sharing: SharedCredentials? = nil
    ) throws(CredentialIdentityStoreError) -> [RankedIdentity] {
        guard !serviceIdentifiers.isEmpty else {
            let listing = try identityListing().filter { $0.entry == .password }
            return listing.rows.map(listing.rankedIdentity)
        }
        return try credentialIdentities(matching: serviceIdentifiers.map(ServiceKey.init(parsing:)), minimumLevel: minimumLevel, sharing: sharing)
    }

    /// `credentialIdentities(for:)` of a request a host has already taken apart (it parsed the
    /// services to judge them by its own rules): a fill parses each URL once.
    package func credentialIdentities(
        matching request: [ServiceKey], minimumLevel: MatchLevel, sharing: SharedCredentials?
    ) throws(CredentialIdentityStoreError) -> [RankedIdentity] {
        let listing = try identityListing(matching: request, minimumLevel: minimumLevel, kind: .password, sharing: sharing)
        return listing.rows.map(listing.rankedIdentity)
    }

    /// The one-time-code identities (Apple's `ASOneTimeCodeCredentialIdentity`, iOS 18)
    /// matching `serviceIdentifiers`, best first, with the same ranking and provision rule as
    /// passwords.
    public func oneTimeCodeIdentities(
        for serviceIdentifiers: [CredentialServiceIdentifier], minimumLevel: MatchLevel = .registrableDomain
    ) throws(CredentialIdentityStoreError) -> [RankedIdentity] {
        try oneTimeCodeIdentities(matching: serviceIdentifiers.map(ServiceKey.init(parsing:)), minimumLevel: minimumLevel)
    }

    /// `oneTimeCodeIdentities(for:)` of a request already taken apart.
    package func oneTimeCodeIdentities(matching request: [ServiceKey], minimumLevel: MatchLevel) throws(CredentialIdentityStoreError) -> [RankedIdentity] {
        let listing = try identityListing(matching: request, minimumLevel: minimumLevel, kind: .oneTimeCode, sharing: nil)
        return listing.rows.map(listing.rankedIdentity)
    }

    /// The passkey identities (Apple's `ASPasskeyCredentialIdentity`) of relying party
    /// `relyingPartyIdentifier`, exactly that id (WebAuthn scopes a credential to its rpId, never
    /// to a sibling host), best first: read from the one bucket of that host.
    public func passkeyIdentities(forRelyingParty relyingPartyIdentifier: String) throws(CredentialIdentityStoreError) -> [PasskeyCredentialIdentity] {
        try readable()
        let service = CredentialServiceIdentifier(identifier: relyingPartyIdentifier, type: .domain)
        let key = ServiceKey(parsing: service)
        guard key.isParsed else { return [] }
        let usage = vault.deviceState.lastUsed()
        return try mapped {
            try vault.readingIndex { index, manifest in
                let entries = try index.entries(
                    inSlot: index.identitySlot(for: key, layout: manifest.layout), of: manifest, filter: .hosts([key.host]), filedUnder: key.filingHost)
                let passkeys = entries.compactMap { entry -> IdentityEntry? in
                    guard case .identity(let identity) = entry, identity.kind == .passkey, identity.serviceIdentifier == service,
                          identity.mode != .never
                    else { return nil }
                    return identity
                }
                // The order of every unmatched list: rank, then recent use, then record id.
                let key = { (identity: IdentityEntry) in
                    ServiceMatcher.RankingKey(unmatchedRank: identity.rank, lastUsed: usage.lastUsed(identity.recordID), id: identity.recordID.words)
                }
                return passkeys.sorted { key($0).precedes(key($1)) }.map { identity in
                    PasskeyCredentialIdentity(
                        relyingPartyIdentifier: identity.serviceIdentifier.identifier, userName: identity.user, credentialID: identity.credentialID,
                        userHandle: identity.userHandle, recordIdentifier: identity.recordID.hex, rank: Int(identity.rank))
                }
            }
        }
    }

    /// The records whose id starts with `prefix` (lowercase hex, at least two digits): read from
    /// the one ledger shard of their first byte (SPEC.md §7.4), never a scan of the vault.
    public func recordIdentifiers(withPrefix prefix: String) throws(CredentialIdentityStoreError) -> [RecordID] {
        try readable()
        let digits = Array(prefix.utf8)
        guard digits.count >= 2, digits.count <= 2 * identifierByteCount,
              digits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let first = Hex.decode(String(prefix.prefix(2)))?.first
        else { return [] }
        return try mapped {
            try vault.readingIndex { index, manifest in
                try index.ledger(inSlot: IndexManifest.identitySlots + Int(first), of: manifest).map(\.recordID).filter { $0.hex.hasPrefix(prefix) }
            }
        }
    }

    /// The item entry of record `id` (its kind, name, user and a service), found through its
    /// ledger entry; `nil` for an unknown record or an index of layout 1.
    public func item(for id: RecordID) throws(CredentialIdentityStoreError) -> ItemEntry? {
        try readable()
        return try mapped {
            try vault.readingIndex { index, manifest -> ItemEntry? in
                guard let ledger = try index.ledgerEntry(for: id, in: manifest) else { return nil }
                for slot in ledger.identitySlots {
                    for case .item(let item) in try index.entries(inSlot: Int(slot), of: manifest) where item.recordID == id { return item }
                }
                return nil
            }
        }
    }

    /// The items whose name is `name`, compared case-insensitively (SPEC.md §7.3): reads one
    /// bucket, whatever the vault's size.
    public func items(named name: String) throws(CredentialIdentityStoreError) -> [ItemEntry] {
        try readable()
        let filing = ItemEntry.filingName(name: name, recordID: RecordID(words: IdentifierWords(high: 0, low: 0)))
        guard !name.isEmpty else { return [] }
        return try mapped {
            try vault.readingIndex { index, manifest in
                guard manifest.layout.hasItemEntries else { return [] }  // layouts 1 and 2 have no item entries
                return try index.entries(
                    inSlot: index.itemSlot(filingName: filing), of: manifest, filter: .names([ItemEntry.foldedName(name)]), filedUnder: filing
                ).compactMap { entry in if case .item(let item) = entry { item } else { nil } }
            }
        }
    }

    /// `credentialIdentities(for:minimumLevel:)` as compact rows, for callers that print
    /// thousands of them (`coffer list SERVICE` of a site with 10,000 hosts).
    public func identityListing(
        for serviceIdentifiers: [CredentialServiceIdentifier], minimumLevel: MatchLevel = .registrableDomain,
        kind: IdentityKind = .password, sharing: SharedCredentials? = nil
    ) throws(CredentialIdentityStoreError) -> IdentityListing {
        try identityListing(matching: serviceIdentifiers.map(ServiceKey.init(parsing:)), minimumLevel: minimumLevel, kind: kind, sharing: sharing)
    }

    private func identityListing(
        matching request: [ServiceKey], minimumLevel: MatchLevel, kind: IdentityKind, sharing: SharedCredentials?
    ) throws(CredentialIdentityStoreError) -> IdentityListing {
        try readable()
        let usage = vault.deviceState.lastUsed()
        let shared = minimumLevel == .sharedCredential ? sharing.map { Self.sharedRequests(request, $0) } ?? [] : []
        return try mapped {
            try vault.readingIndex { index, manifest in
                // A request names a handful of services: arrays, not hash tables (a fill builds
                // no Set or Dictionary, whose first use costs a scan of every protocol conformance).
                let wanted = request.filter(\.isParsed)
                // A sharing site's logins are looked for in its hosts' buckets alone (its domain
                // and `www.` under it): a group of 50 sites must not read the whole index.
                let payloads: [[UInt8]]
                if minimumLevel >= .host {
                    // One host's part of its bucket where this device keeps large buckets in parts.
                    let places = wanted.map { (slot: index.identitySlot(for: $0, layout: manifest.layout), part: index.part(filingName: $0.filingHost)) }
                    payloads = try places.uniqued(by: { $0.slot == $1.slot && $0.part == $1.part })
                        .compactMap { try index.payload(inSlot: $0.slot, part: $0.part, of: manifest) }
                } else {
                    let slots = wanted.map(\.site).uniqued(by: ==).flatMap { index.identitySlots(ofSite: $0, layout: manifest.layout) }
                        + shared.map { index.identitySlot(for: $0.key, layout: manifest.layout) }
                    payloads = try slots.sorted().uniqued(by: ==).compactMap { try index.identityPayload(inSlot: $0, of: manifest) }
                }
                return try IdentityListing(
                    matching: request, shared: shared, minimumLevel: minimumLevel, kind: kind, payloads: payloads, layout: manifest.layout,
                    usage: usage, legacyKey: IdentityIndex.legacyKey)
            }
        }
    }

    /// The sites sharing accounts with each requested host, as keys that carry the request's
    /// scheme and port (an `https` login stays off an `http` page on a shared site too).
    private static func sharedRequests(_ request: [ServiceKey], _ sharing: SharedCredentials) -> [SharedRequest] {
        var shared: [SharedRequest] = []
        for (index, wanted) in request.enumerated() where wanted.isParsed {
            for source in sharing.sources(forHost: wanted.host) {
                for host in [source.domain, "www." + source.domain] {
                    let key = ServiceKey(
                        site: DomainNames.registrableDomain(ofCanonicalHost: source.domain) ?? source.domain, host: host,
                        scheme: wanted.scheme, port: wanted.port, path: "/")
                    shared.append(SharedRequest(key: key, requestIndex: index))
                }
            }
        }
        return shared
    }

    /// Every identity (password and one-time code) and every listed item, as compact rows: what
    /// `coffer list` prints, without a `String` per field until one is asked for.
    /// - Parameter order: best first (every host's lookup), or by service as a person reads it
    ///   (`coffer list`), which this device's listing snapshot keeps: read in that order a
    ///   listing is one file and one pass, without a sort.
    public func identityListing(order: IdentityListing.Order = .suggestion) throws(CredentialIdentityStoreError) -> IdentityListing {
        try readable()
        let usage = vault.deviceState.lastUsed()
        let listing = try mapped {
            try vault.readingIndex { index, manifest in try self.listing(index, manifest, usage: usage) }
        }
        return order == .service ? listing.sortedByService() : listing.sortedForSuggestion()
    }

    /// What a shell's Tab offers (SPEC.md §7.6): the candidates of `section` (0 ENTRY, 1
    /// SERVICE) that start with `prefix`, one per line, from this device's completion table —
    /// one chunk of it, brought up to date first when the index changed — or, while the store
    /// is disabled here, from a listing made for this Tab and kept nowhere.
    public func completionCandidates(section: UInt8, prefix: String) throws(CredentialIdentityStoreError) -> [UInt8] {
        try readable()
        let usage = vault.deviceState.lastUsed()
        return try mapped {
            try vault.readingIndex { index, manifest in
                try self.completionCandidates(section: section, prefix: Array(prefix.utf8), index, manifest, usage: usage)
            }
        }
    }

    /// Brings this device's listing snapshot and completion table (SPEC.md §7.6) up to date
    /// with the index now, while the store is enabled here (nothing is kept otherwise). For a
    /// process that has just changed most buckets (an import): it pays the rebuild, instead of
    /// the next `coffer list`, Tab or vault page a person waits for.
    public func prepareListings() throws(CredentialIdentityStoreError) {
        guard state.isEnabled else { return }
        let usage = vault.deviceState.lastUsed()
        try mapped {
            try vault.readingIndex { index, manifest in
                // The listing brought up to date applies its change to a completion table made from
                // the same buckets; any other is built from it.
                let listing = try self.listing(index, manifest, usage: usage)
                let table = DerivedTable(.completionTable, index: index, device: vault.deviceState)
                func isCurrent() -> Bool { table.header()?.isCurrent(for: manifest) == true }
                if !isCurrent() { try table.buildingAlone { if !isCurrent() { _ = self.rebuildCompletionTable(table, from: listing, manifest) } } }
            }
        }
    }

    /// Calls `body` with every identity, best first: `identityListing()` made one at a time.
    public func forEachCredentialIdentity(_ body: (PasswordCredentialIdentity) throws -> Void) throws(CredentialIdentityStoreError) {
        let listing = try identityListing()
        try mapped { for row in listing.rows where row.entry == .password { try body(listing.identity(row)) } }
    }

    // MARK: Changes (Apple's names)

    /// Adds identities, or updates the rank of ones already stored. Each must name an existing
    /// record; the provider only hands out a password for a service the record itself lists.
    public func saveCredentialIdentities(_ identities: [PasswordCredentialIdentity]) throws(CredentialIdentityStoreError) {
        try edit { editor in
            for (id, additions) in try grouped(identities, in: &editor) {
                guard try editor.ledgerEntry(for: id) != nil else {
                    throw CredentialIdentityStoreError.internalError(.recordNotFound(id))
                }
                var current = try editor.entries(of: id)
                for addition in additions {
                    current.removeAll { $0.isPasswordIdentity(of: addition.serviceIdentifier, user: addition.user) }
                    current.append(.identity(addition))
                }
                try editor.setEntries(of: id, to: current)
            }
        }
    }

    /// Removes identities from suggestions; the records themselves stay.
    public func removeCredentialIdentities(_ identities: [PasswordCredentialIdentity]) throws(CredentialIdentityStoreError) {
        try edit { editor in
            for (id, removals) in try grouped(identities, in: &editor) {
                let kept = try editor.entries(of: id).filter { entry in
                    !removals.contains { entry.isPasswordIdentity(of: $0.serviceIdentifier, user: $0.user) }
                }
                try editor.setEntries(of: id, to: kept)
            }
        }
    }

    /// Replaces every password identity with `identities`, in one commit. One-time-code
    /// identities go too; records bring them back when next written or rebuilt.
    public func replaceCredentialIdentities(with identities: [PasswordCredentialIdentity]) throws(CredentialIdentityStoreError) {
        try edit { editor in
            let groups = try grouped(identities, in: &editor)  // before the removal: it reads each record's mode
            try editor.removeAllIdentities()
            for (id, entries) in groups {
                guard try editor.ledgerEntry(for: id) != nil else {
                    throw CredentialIdentityStoreError.internalError(.recordNotFound(id))
                }
                try editor.setEntries(of: id, to: editor.entries(of: id) + entries.map(BucketEntry.identity))
            }
        }
    }

    public func removeAllCredentialIdentities() throws(CredentialIdentityStoreError) {
        try edit { editor in try editor.removeAllIdentities() }
    }

    // MARK: The configuration toggle

    /// Turns the store on for this device. Requires the vault to be unlocked: enabling is an
    /// authenticated act (the configuration toggle tells the truth: SPEC.md §7.6).
    public func enable() throws(CredentialIdentityStoreError) {
        do {
            let keys = try vault.keys()
            try vault.deviceState.enable(indexKey: keys.indexKey)
        } catch VaultError.locked {
            throw .storeDisabled
        } catch let error as StorageError {
            throw .internalError(.storage(error))
        } catch {
            throw .internalError(.invalidInput("\(error)"))
        }
    }

    /// Turns the store off for this device and removes the key that made it readable while locked.
    public func disable() throws(CredentialIdentityStoreError) {
        do { try vault.deviceState.disable() } catch { throw .internalError(.storage(error)) }
    }

    /// A token that changes whenever the index does (BLAKE2b-256 of the manifest, which is sealed
    /// under a fresh nonce at every commit); `nil` for a vault without an index. A long-lived host
    /// keeps what it derived from a listing until the token changes: the SSH agent's key table
    /// costs one small file read per request instead of a listing of the whole vault.
    public func changeToken() throws(CredentialIdentityStoreError) -> [UInt8]? {
        try readable()
        return try mapped { try vault.identityIndex().manifestDigest() }
    }

    // MARK: Internals

    func readable() throws(CredentialIdentityStoreError) {
        guard state.isEnabled || vault.isUnlocked else { throw .storeDisabled }
    }

    private func edit(_ body: (inout IndexEditor) throws -> Void) throws(CredentialIdentityStoreError) {
        guard state.isEnabled else { throw .storeDisabled }
        try mapped {
            try vault.writeTransaction { opened throws in
                let index = try vault.identityIndex(opened)
                try vault.recover(index)
                let manifest = try index.readManifest()
                try vault.checkGeneration(of: manifest)
                var editor = IndexEditor(index: index, manifest: manifest, details: vault.itemDetails(in: opened))
                try body(&editor)
                try vault.deviceState.recordGeneration(try editor.commit().generation)
            }
        }
    }

    func mapped<Result>(_ body: () throws -> Result) throws(CredentialIdentityStoreError) -> Result {
        do {
            return try body()
        } catch let error as CredentialIdentityStoreError {
            throw error
        } catch VaultError.locked {
            throw .storeDisabled
        } catch let error as VaultError {
            throw .internalError(error)
        } catch let error as StorageError {
            throw .internalError(.storage(error))
        } catch {
            throw .internalError(.invalidInput("\(error)"))
        }
    }

    /// Identities by record, as entries. A new identity takes the match mode of the record's
    /// other identities, else of the record itself when the vault is unlocked, else `host`.
    private func grouped(_ identities: [PasswordCredentialIdentity], in editor: inout IndexEditor) throws -> [(RecordID, [IdentityEntry])] {
        var groups: [RecordID: [IdentityEntry]] = [:]
        for identity in identities {
            guard let id = try? RecordID(hex: identity.recordIdentifier) else {
                throw CredentialIdentityStoreError.internalError(.invalidInput("'\(identity.recordIdentifier.prefix(40))' is not a record identifier"))
            }
            let keys = try? vault.keys()
            let mode = try editor.identities(of: id).first?.mode
                ?? keys.flatMap { try? vault.checkedRecord(id, ledger: editor.ledgerEntry(for: id), keys: $0, in: editor.index.opened).matchMode } ?? .host
            groups[id, default: []].append(IdentityEntry(
                recordID: id, serviceIdentifier: identity.serviceIdentifier, user: identity.user, rank: Int64(identity.rank),
                mode: mode, key: ServiceKey(parsing: identity.serviceIdentifier)))
        }
        return groups.sorted { $0.key < $1.key }
    }
}

extension Vault {
    /// This vault's identity store.
    public var identityStore: CredentialIdentityStore { CredentialIdentityStore(vault: self) }
}
