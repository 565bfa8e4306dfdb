import CofferProvider
import CofferHostKit
import CofferAudit
import FoundationEssentials

/// The browser's AutoFill host (SPEC.md §13): answers the extension's requests with the
/// provider's semantics. Suggestions come from the identity store and work while locked (as
/// `coffer list` does); a password leaves only in answer to a fill a person asked for — a click
/// on a suggestion, the keyboard command, the popup — or to fill on page load under the
/// provision rule; a locked vault asks through pinentry, never silently.
///
/// The host keeps no key of its own: each request opens the vault, uses the keyring session if
/// one is live, and forgets the vault when it has answered. A pinentry unlock starts a session
/// (as `coffer unlock` does), so `coffer lock` locks the browser too.
public final class BrowserHost {
    /// The door: container, sessions, pinentry as the interaction, the unlock policy.
    public let session: HostSession
    var sessions: KeyringSessions? { session.sessions }
    /// How the host asks for the master password (pinentry); `nil`: it never asks.
    var interaction: UserInteraction? { session.interaction }
    /// The idle timeout of a session a pinentry unlock starts (as `coffer unlock`'s default).
    public var sessionTimeout: TimeInterval {
        get { session.sessionTimeout }
        set { session.sessionTimeout = newValue }
    }
    /// Suggestions in one answer; more are cut (the answer must stay under 1 MiB).
    static let maximumSuggestions = 100
    /// The passkeys this host's upgrades made, by credential id: only these may be undone, and
    /// only for `undoWindow` (SPEC.md §13.5.2).
    var upgrades: [[UInt8]: (record: RecordID, at: ContinuousClock.Instant)] = [:]
    /// When each relying party's recent signals came, for their rate limit.
    var signals: [String: [ContinuousClock.Instant]] = [:]
    /// When a signal last read every record (at most once a minute, whatever the page).
    var lastRecordScan: ContinuousClock.Instant?
    /// The vault page's tables, by vault ("" one's own, else the team's name), each kept until
    /// its vault's identity store changes (SPEC.md §13.7).
    var pageTables: [String: VaultPageTable] = [:]
    /// The index directories of the vaults whose tables it keeps, watched for their commits.
    var indexWatch: (directories: [String], watch: DirectoryWatch)?
    /// Whether the host has built one's own table at its first pause (or found it could not).
    var preparedFirstTable = false
    /// When the page last asked for a table (or the first pause built one); kept tables are
    /// let go `pageTablesKept` later, and built again when the page next asks.
    var pageTablesUsed = ContinuousClock.now
    var pageTablesKept: Duration = .seconds(600)
    /// The file the vault page is sending in parts (`attachmentPart`), until its `attachmentAdd`:
    /// one at a time, in memory only (never on a disk unsealed).
    var upload: AttachmentUpload?
    /// The largest file the page may send in parts.
    var uploadLimit = AttachmentUpload.maximumSize

    public init(session: HostSession) {
        self.session = session
    }

    public convenience init(container: GroupContainer, configuration: VaultConfiguration, sessions: KeyringSessions?, interaction: UserInteraction?) {
        self.init(session: HostSession(container: container, configuration: configuration, sessions: sessions, interaction: interaction))
    }

    /// Answers one message (its JSON bytes). Never throws: every failure is an error answer,
    /// and the host goes on serving.
    public func respond(to message: [UInt8]) -> JSONValue {
        var id: JSONValue = .null
        let started = ContinuousClock.now
        do {
            guard let object = (try? JSONValue.parse(message))?.objectValue else { throw BrowserHostError.badRequest("not a JSON object") }
            id = object["id"] ?? .null
            var answer = try handle(BrowserRequest(object))
            answer["id"] = id
            answer["ok"] = .bool(true)
            // The host's share of a request's time (what the README's browser figures split out).
            let elapsed = ContinuousClock.now - started
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            answer["elapsedMs"] = .double((milliseconds * 1000).rounded() / 1000)
            return .object(answer)
        } catch let error as BrowserHostError {
            return Self.failure(error, id: id, extra: error.extra)
        } catch {
            return Self.failure(.failed("\(error)"), id: id)
        }
    }

    static func failure(_ error: BrowserHostError, id: JSONValue, extra: JSONObject = [:]) -> JSONValue {
        var answer = extra
        answer["id"] = id
        answer["ok"] = .bool(false)
        answer["error"] = ["code": .string(error.code), "message": .string(error.description)]
        return .object(answer)
    }

    // MARK: Requests

    func handle(_ request: BrowserRequest) throws -> JSONObject {
        if case .generate(let length, let origin, let rules) = request {  // needs no vault
            let host = origin.flatMap { HostNames.canonicalHost($0.host) }
            let quirks = host == nil ? nil : session.webQuirks
            let chosen = ChosenPasswordRule(pageRules: rules, host: host, quirks: quirks)
            let generated = try chosen.generate(length: length)
            return [
                "password": .string(generated.password), "entropyBits": .double(generated.entropyBits),
                "rules": chosen.rules.map { .string($0.description) } ?? .null, "rulesFrom": .string(chosen.source),
            ]
        }
        if case .attachmentPart(let name, let content) = request {  // needs no vault
            return try receivePart(content, of: name)
        }
        // Asking what there is (a page load's suggestions, a search, the state) is no use of an
        // unlock session: it must not keep an idle vault unlocked (SPEC.md §13.3).
        let vault = try request.readsSecrets ? openVault() : session.openVaultWithoutUse()
        switch request {
        case .hello:
            return [
                "protocol": 1, "version": .string(cofferVersion), "locked": .bool(!session.isUnlocked(vault)),
                "suggestionsWhileLocked": .bool(vault.identityStore.state.isEnabled),
                "changeToken": changeToken(of: vault).map { .string(Base64.encode($0)) } ?? .null,
            ]
        case .suggest(let origin):
            return try suggestions(for: origin, in: vault)
        case .search(let text):
            let listing = try readable(vault) { try $0.identityListing() }
            let found = listing.filter { row in
                listing.withUserBytes(of: row) { String(decoding: $0, as: UTF8.self).lowercased().contains(text) }
                    || listing.withIdentifierBytes(of: row) { String(decoding: $0, as: UTF8.self).lowercased().contains(text) }
            }
            return ["identities": .array(found.rows.prefix(Self.maximumSuggestions).map { Self.json(found.rankedIdentity($0)) }),
                    "locked": .bool(!session.isUnlocked(vault))]
        case .fill(let origin, let chosen, let trigger):
            return try fill(origin, chosen: chosen, trigger: trigger, in: vault)
        case .saveState(let origin, let user, let password, let topOrigin):
            return try saveState(origin, user: user, password: password, topOrigin: topOrigin, in: vault)
        case .items(let kind):
            return try items(of: kind, in: vault)
        case .saveCard(let origin, let card):
            return try saveCard(card, from: origin, in: vault)
        case .textItems(let query):
            return try textItems(matching: query, in: vault)
        case .textMembers(let id):
            try unlock(vault, reason: "to choose text to insert")
            guard let record = try existing(id, in: vault) else { throw BrowserHostError.notFound }
            return ["members": .array(record.insertableTexts.map { text in
                .object(["member": .string(text.member), "label": .string(text.label), "secret": .bool(text.isSecret)])
            })]
        case .insertText(let id, let member):
            return try insertText(member, of: id, in: vault)
        case .fillItem(let origin, let id, let kind):
            return try fillItem(id, of: kind, for: origin, in: vault)
        case .audit(let origin):
            return try audit(origin, in: vault)
        case .save(let origin, let user, let password):
            try unlock(vault, reason: "to save a login for \(origin.host)")
            guard try hostLevel(origin, in: vault).first(where: { $0.identity.user == user }) == nil else { throw BrowserHostError.exists }
            let record = try vault.add(RecordDraft(serviceIdentifiers: [origin.serviceIdentifier], user: user, password: password))
            return ["recordIdentifier": .string(record.id.hex)]
        case .update(let origin, let id, let password):
            try unlock(vault, reason: "to update a login for \(origin.host)")
            guard try hostLevel(origin, in: vault).contains(where: { $0.identity.recordIdentifier == id.hex }) else { throw BrowserHostError.notFound }
            let record = try vault.updateRecord(withID: id) { if $0.password != password { $0.password = password } }
            return ["recordIdentifier": .string(record.id.hex), "revision": .integer(record.revision)]
        case .reveal(let id):
            try unlock(vault, reason: "to copy a password")
            let record = try vault.record(withID: id)
            return ["user": .string(record.user), "password": .string(record.password)]
        case .attachments(let id):
            try unlock(vault, reason: "to list an item's attachments")
            return ["attachments": .array(try vault.record(withID: id).attachments.map { attachment in
                .object([
                    "name": .string(attachment.name), "mediaType": .string(attachment.mediaType), "size": .integer(attachment.size),
                    "added": .string(UTCTimestamp.format(attachment.added)),
                ])
            })]
        case .attachmentGet(let id, let name):
            try unlock(vault, reason: "to open an attachment")
            guard let attachment = try vault.record(withID: id).attachment(named: name) else { throw BrowserHostError.notFound }
            guard attachment.size <= UInt64(BrowserRequest.maximumInlineAttachment) else { throw BrowserHostError.tooLarge(Int(attachment.size)) }
            var content: [UInt8] = []
            try vault.readAttachment(named: name, of: id) { content += $0 }
            return ["name": .string(name), "mediaType": .string(attachment.mediaType), "content": .string(Base64.encode(content))]
        case .attachmentAdd(let id, let name, let mediaType, let source, let team):
            var content = try takeContent(source)  // an upload is used once, whatever the answer
            defer { AttachmentUpload.erase(&content) }
            let owner = try unlocked(team, vault, reason: "to add an attachment")
            guard try existing(id, in: owner) != nil else { throw BrowserHostError.notFound }
            var offset = 0
            let attachment: Attachment
            do {
                attachment = try owner.attach(name: name, mediaType: mediaType, to: id) { buffer in
                    let count = min(buffer.count, content.count - offset)
                    buffer.copyBytes(from: content[offset..<offset + count])
                    offset += count
                    return count
                }
            } catch VaultError.invalidInput(let reason) {
                throw BrowserHostError.invalid(member: "name", reason)
            }
            return ["name": .string(attachment.name), "mediaType": .string(attachment.mediaType), "size": .integer(attachment.size)]
        case .attachmentSave(let id, let name, let team):
            let owner = try unlocked(team, vault, reason: "to save an attachment")
            guard try existing(id, in: owner)?.attachment(named: name) != nil else { throw BrowserHostError.notFound }
            return ["path": .string(try saveAttachment(name, of: id, in: owner))]
        case .generate, .attachmentPart:
            return [:]  // answered above
        case .passkeyList(let origin, let options, let unlock):
            return try passkeyList(origin, options, unlock: unlock, in: vault)
        case .passkeyGet(let origin, let options, let chosen):
            return try passkeyGet(origin, options, chosen: chosen, in: vault)
        case .passkeyCreate(let origin, let options, let account):
            return try passkeyCreate(origin, options, account, in: vault)
        case .passkeyUpgrade(let origin, let options, let account, let login):
            return try passkeyUpgrade(origin, options, account, login: login, in: vault)
        case .passkeyUndo(let origin, let id, let credentialID):
            return try passkeyUndo(origin, id, credentialID: credentialID, in: vault)
        case .passkeySignal(let origin, let relyingParty, let signal):
            return try passkeySignal(origin, relyingParty: relyingParty, signal, in: vault)
        case .lock:
            session.lock(vault)
            return ["locked": true]
        case .unlock:
            try unlock(vault, reason: "to open your vault")
            return ["locked": false]
        case .vaultItems(let query):
            return try vaultItems(query, in: vault)
        case .vaultForm:
            var form = VaultPageItem.form
            form["clipboardSeconds"] = .integer(HostSession.clipboardClearDelay(session.environment))
            return form
        case .vaultItem(let reference):
            return try vaultItem(reference, in: vault)
        case .vaultCode(let reference):
            return try vaultCode(reference, in: vault)
        case .vaultSave(let name, let edit, let content):
            return try vaultSave(content, vault: name, edit: edit, in: vault)
        case .vaultAudit(let breaches):
            return try vaultAudit(breaches: breaches, in: vault)
        case .vaultDelete(let reference, let revision):
            return try vaultDelete(reference, revision: revision, in: vault)
        }
    }

    /// Writes an attachment into the person's downloads directory (`$XDG_DOWNLOAD_DIR`, else
    /// `~/Downloads`) under its name, or `name (2)`… where that is taken: 0600, atomically, never
    /// through a link or over a file. - Returns: the path written.
    func saveAttachment(_ name: String, of id: RecordID, in vault: Vault) throws -> String {
        let environment = session.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        let directory = environment["XDG_DOWNLOAD_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/Downloads"
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let (stem, suffix) = dot.map { (String(name[..<$0]), String(name[$0...])) } ?? (name, "")
        for number in 1...100 {
            let path = directory + "/" + (number == 1 ? name : "\(stem) (\(number))\(suffix)")
            do {
                try FileSystem.standard.writeUserFileStreaming(to: path, replacing: false) { file in
                    try vault.readAttachment(named: name, of: id) { try file.write($0) }
                }
                return path
            } catch let error as StorageError where error.isAlreadyExisting {
                continue
            }
        }
        throw BrowserHostError.exists
    }

    /// Every identity for the origin, best first, each with its match level and whether it
    /// fills without a choice; never a password. While locked it answers from the identity
    /// store when that is enabled on this device, as iOS's QuickType bar does.
    func suggestions(for origin: BrowserOrigin, in vault: Vault) throws -> JSONObject {
        let listing: IdentityListing
        func list() throws(CredentialIdentityStoreError) -> IdentityListing {
            try vault.identityStore.identityListing(for: [origin.serviceIdentifier], minimumLevel: .sharedCredential, sharing: session.sharedCredentials)
        }
        do {
            listing = try list()
        } catch {
            // Suggestions off on this device: only an unlocked vault (a live session) shows them.
            guard error == .storeDisabled else { throw error }
            guard session.unlockFromSession(vault, asUse: false) else { return ["identities": [], "locked": true, "suggestionsOff": true] }
            listing = try list()
        }
        // Rows are cheap; an identity's strings are made only for the ones sent (a site with
        // 10,000 hosts made 10,000 of them to send 100).
        var shown = listing.rows.prefix(Self.maximumSuggestions).map { Self.json(listing.rankedIdentity($0)) }
        var total = listing.count
        // Then the teams' (SPEC.md §16.6), each row naming its team.
        for team in teams(of: vault) where shown.count < Self.maximumSuggestions {
            guard let teamListing = try? team.vault.identityStore.identityListing(
                for: [origin.serviceIdentifier], minimumLevel: .sharedCredential, sharing: session.sharedCredentials)
            else { continue }
            total += teamListing.count
            shown += teamListing.rows.prefix(Self.maximumSuggestions - shown.count).map { row in
                guard case .object(var object) = Self.json(teamListing.rankedIdentity(row)) else { return .null }
                object["vault"] = .string(team.name)
                return .object(object)
            }
        }
        return ["identities": .array(shown), "locked": .bool(!session.isUnlocked(vault)), "truncated": .bool(total > shown.count)]
    }

    /// A token that changes whenever `vault` or one of its teams does (an edit anywhere, a sync):
    /// the vault page reads its list again when it does. Their identity stores' tokens, one after
    /// another; it names nothing. Nil when one's own store may not be read now.
    func changeToken(of vault: Vault, teams: [(name: String, vault: Vault)]? = nil) -> [UInt8]? {
        guard var token = (try? vault.identityStore.changeToken()) ?? nil else { return nil }
        for team in teams ?? self.teams(of: vault) { token += ((try? team.vault.identityStore.changeToken()) ?? nil) ?? [0] }
        return token
    }

    /// The teams `vault` opens on this device, each unlocked from a session when one is live.
    func teams(of vault: Vault) -> [(name: String, vault: Vault)] {
        session.teams(of: vault)
    }

    /// A fill (SPEC.md §13.2): a `choice` releases the identity the person clicked, if it is one
    /// of the origin's suggestions; the `command` releases only what the provision rule allows
    /// and may ask for the master password; `pageLoad` releases only what the rule allows, only
    /// unlocked, only in the top frame, and over http only for an http login.
    func fill(_ origin: BrowserOrigin, chosen: RecordID?, trigger: BrowserRequest.Trigger, in personal: Vault) throws -> JSONObject {
        var vault = personal
        let credential: PasswordCredential
        let identity: PasswordCredentialIdentity
        switch trigger {
        case .choice:
            guard let chosen else { throw BrowserHostError.badRequest("a choice names its recordIdentifier") }
            if !vault.isUnlocked && !vault.identityStore.state.isEnabled { try unlock(vault, reason: "to fill on \(origin.host)") }
            // One's own suggestion, else a team's (record ids are random: one vault holds it).
            var found = try suggestions(for: origin, in: vault.identityStore).first { $0.identity.recordIdentifier == chosen.hex }
            if found == nil {
                for team in teams(of: vault) {
                    guard let offered = try? suggestions(for: origin, in: team.vault.identityStore)
                        .first(where: { $0.identity.recordIdentifier == chosen.hex })
                    else { continue }
                    (found, vault) = (offered, team.vault)
                    break
                }
            }
            guard let offered = found?.identity else { throw BrowserHostError.notFound }
            let host = AutoFillHost(provider: session.provider(for: vault, mayAsk: trigger.mayAsk))
            // The same provide as every host's (AutoFillHost): silent, else the provider asks.
            switch host.provide(chosen: offered, allowInteraction: interaction != nil) {
            case .filled(let filled, _): (credential, identity) = (filled, offered)
            case .cancelled(let error): throw BrowserHostError.from(error)
            default: throw BrowserHostError.failed("the provider did not answer")
            }
        case .command, .pageLoad:
            if case .pageLoad(let topFrame) = trigger {
                guard topFrame else { throw BrowserHostError.forbidden("fill on page load happens only in the top frame") }
                guard vault.isUnlocked else { throw BrowserHostError.locked }
            } else if !vault.isUnlocked && !vault.identityStore.state.isEnabled {
                try unlock(vault, reason: "to fill on \(origin.host)")
            }
            switch session.fill(from: vault, serviceIdentifiers: [origin.serviceIdentifier], allowInteraction: trigger.mayAsk, mayAsk: trigger.mayAsk) {
            case .filled(let filled, let filledIdentity?):
                (credential, identity) = (filled, filledIdentity)
            case .filled, .filledCode: throw BrowserHostError.failed("the provider answered without an identity")
            case .noMatch: throw BrowserHostError.notFound
            case .choiceRequired: throw BrowserHostError.choiceRequired
            case .cancelled(let error): throw BrowserHostError.from(error)
            }
            if case .pageLoad = trigger, !origin.isSecure, !identity.serviceIdentifier.identifier.lowercased().hasPrefix("http://") {
                throw BrowserHostError.forbidden("fill on page load over http needs a login saved for http")
            }
        }
        return ["user": .string(credential.user), "password": .string(credential.password), "recordIdentifier": .string(identity.recordIdentifier)]
    }

    /// The origin's own logins, then those of the sites sharing its accounts (SPEC.md §8.1.1).
    private func suggestions(for origin: BrowserOrigin, in store: CredentialIdentityStore) throws(CredentialIdentityStoreError) -> [RankedIdentity] {
        try store.credentialIdentities(for: [origin.serviceIdentifier], minimumLevel: .sharedCredential, sharing: session.sharedCredentials)
    }

    /// Whether a submitted login is new, a changed password, or what the vault holds: what the
    /// extension's save bar offers. Locked, it compares only what the identity store shows.
    /// Nothing is offered for a frame of a site that asks for other services' credentials when
    /// embedded (`embedded`), and a stored password followed by a code on a site that asks for
    /// that is no change (SPEC.md §13.3).
    func saveState(_ origin: BrowserOrigin, user: String, password: String, topOrigin: BrowserOrigin?, in vault: Vault) throws -> JSONObject {
        let quirks = session.webQuirks
        if let topOrigin, let host = HostNames.canonicalHost(origin.host), let top = HostNames.canonicalHost(topOrigin.host),
           (DomainNames.registrableDomain(ofCanonicalHost: host) ?? host) != (DomainNames.registrableDomain(ofCanonicalHost: top) ?? top),
           (try? quirks?.asksForOtherServicesWhenEmbedded(host: host)) == true {
            return ["state": "embedded"]
        }
        let existing: RankedIdentity?
        do {
            existing = try hostLevel(origin, in: vault).first { $0.identity.user == user }
        } catch CredentialIdentityStoreError.storeDisabled {
            return ["state": "unknown"]
        }
        guard let existing, let id = try? RecordID(hex: existing.identity.recordIdentifier) else { return ["state": "new"] }
        guard vault.isUnlocked else { return ["state": "unknown", "recordIdentifier": .string(id.hex)] }
        let stored = try vault.record(withID: id)
        if stored.password == password { return ["state": "unchanged", "recordIdentifier": .string(id.hex)] }
        if Self.isCodeAppended(to: stored.password, in: password), let host = HostNames.canonicalHost(origin.host),
           (try? quirks?.appendsCodeToPassword(host: host)) == true {
            return ["state": "unchanged", "recordIdentifier": .string(id.hex), "appendedCode": true]
        }
        return ["state": "changed", "recordIdentifier": .string(id.hex)]
    }

    /// `submitted` is `stored` followed by 4 to 10 ASCII digits: a one-time code typed after
    /// the password, as some sites ask.
    static func isCodeAppended(to stored: String, in submitted: String) -> Bool {
        guard !stored.isEmpty, submitted.hasPrefix(stored) else { return false }
        let code = submitted.utf8.dropFirst(stored.utf8.count)
        return (4...10).contains(code.count) && code.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// What `coffer audit` would say of the origin's own logins (weak, old, sent over http),
    /// each with where its password is changed: the popup's "Change password". Only while
    /// unlocked, and it never asks: opening the popup is no reason for a prompt.
    func audit(_ origin: BrowserOrigin, in vault: Vault) throws -> JSONObject {
        guard vault.isUnlocked else { return ["logins": [], "locked": true] }
        let pages = changePasswordPages
        var logins: [JSONValue] = []
        for ranked in try vault.identityStore.credentialIdentities(for: [origin.serviceIdentifier]).prefix(Self.maximumSuggestions) {
            guard let id = try? RecordID(hex: ranked.identity.recordIdentifier), let record = try? vault.record(withID: id) else { continue }
            let findings = VaultAudit.findings(of: record, pages: pages)
            guard !findings.isEmpty else { continue }
            logins.append([
                "recordIdentifier": .string(id.hex), "findings": .array(findings.map { .string($0.kind.rawValue) }),
                "changePasswordURL": VaultAudit.changePasswordURL(for: record, pages: pages).map { .string($0) } ?? .null,
            ])
        }
        return ["logins": .array(logins), "locked": false]
    }

    // MARK: Vault access

    /// The vault for one request, unlocked from a live keyring session if there is one.
    func openVault() throws -> Vault {
        try session.openVault()
    }

    /// Unlocks through pinentry unless a session already did (`HostSession`'s policy).
    func unlock(_ vault: Vault, reason: String) throws {
        switch try session.unlock(vault, reason: reason) {
        case .unlocked: return
        case .noInteraction: throw BrowserHostError.locked
        case .cancelled: throw BrowserHostError.cancelled
        case .wrongPassword: throw BrowserHostError.wrongPassword
        }
    }

    private func hostLevel(_ origin: BrowserOrigin, in vault: Vault) throws -> [RankedIdentity] {
        try vault.identityStore.credentialIdentities(for: [origin.serviceIdentifier], minimumLevel: .host)
    }

    func readable<Result>(_ vault: Vault, _ body: (CredentialIdentityStore) throws -> Result) throws -> Result {
        do {
            return try body(vault.identityStore)
        } catch CredentialIdentityStoreError.storeDisabled {
            try unlock(vault, reason: "to search your logins")
            return try body(vault.identityStore)
        }
    }

    /// A suggestion as the extension sees it: never a password.
    static func json(_ ranked: RankedIdentity) -> JSONValue {
        [
            "recordIdentifier": .string(ranked.identity.recordIdentifier), "user": .string(ranked.identity.user),
            "serviceIdentifier": .string(ranked.identity.serviceIdentifier.identifier),
            "match": ranked.match.map { .string($0.level.description) } ?? .null, "automaticFill": .bool(ranked.allowsAutomaticFill),
            // A shared site's login names the site it was saved for (the data's own terms).
            "savedFor": ranked.match?.level == .sharedCredential ? .string(ServiceKey(parsing: ranked.identity.serviceIdentifier).host) : .null,
        ]
    }
}
