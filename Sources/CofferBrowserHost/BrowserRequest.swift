import CofferProvider
import CofferHostKit

/// One request of the extension (SPEC.md §13.2), validated: every member of the right type and
/// within its limits, the origin in its one form. Parsing is pure.
enum BrowserRequest: Equatable {
    /// What started a fill: the person's click on a suggestion, the keyboard command, or the
    /// page loading (only when the user turned fill-on-load on).
    enum Trigger: Equatable {
        case choice
        case command
        case pageLoad(topFrame: Bool)

        /// Whether a person is there to answer a prompt.
        var mayAsk: Bool { if case .pageLoad = self { false } else { true } }
    }

    case hello
    case suggest(BrowserOrigin)
    case search(String)
    case fill(BrowserOrigin, chosen: RecordID?, trigger: Trigger)
    /// `topOrigin`: the tab's page when the login was submitted in a frame of another origin.
    case saveState(BrowserOrigin, user: String, password: String, topOrigin: BrowserOrigin?)
    case save(BrowserOrigin, user: String, password: String)
    case update(BrowserOrigin, RecordID, password: String)
    case reveal(RecordID)
    /// An item's attachments (SPEC.md §6.7): names, types, sizes — never content.
    case attachments(RecordID)
    /// One attachment's content, for one up to `BrowserRequest.maximumInlineAttachment` bytes.
    case attachmentGet(RecordID, name: String)
    /// One attachment written to the person's downloads directory.
    /// `vault`: a team's name (the vault page's team items), nil for one's own.
    case attachmentSave(RecordID, name: String, vault: String?)
    /// A file the vault page's person chose, added to an item (of one's own, or `vault`'s): in
    /// the request, up to `maximumInlineAttachment` bytes (what one message carries), or the
    /// upload its parts made.
    case attachmentAdd(RecordID, name: String, mediaType: String, content: AttachmentContent, vault: String?)
    /// A part of a larger file the vault page adds (SPEC.md §13.3): without `upload` it starts
    /// a new upload, with it the part follows that upload's earlier parts.
    case attachmentPart(upload: String?, content: [UInt8])
    /// The cards or identities a payment or address field may be filled with (SPEC.md §13.3):
    /// names only, answered while locked as suggestions are.
    case items(ItemKind)
    /// The members of the card or identity a person chose for a field of `origin`.
    case fillItem(BrowserOrigin, RecordID, ItemKind)
    /// A card submitted on a page, to keep (the person chose Save); its code only when they ticked it.
    case saveCard(BrowserOrigin, CardMember)
    /// The chooser of text insertion: items by name (every kind), answered while locked.
    case textItems(query: String)
    /// An item's values a person may insert, named, never their text.
    case textMembers(RecordID)
    /// The text of one value, to insert where the person's caret is (the page is named nowhere).
    case insertText(RecordID, member: String)
    /// The popup's question: what audit flags among the tab's logins, and where to change them.
    case audit(BrowserOrigin)
    /// `origin` and the field's `passwordrules` choose the rule (SPEC.md §12.1); both optional.
    case generate(length: Int, origin: BrowserOrigin?, rules: String?)
    case lock
    /// The vault page's Unlock: pinentry, as a fill asks.
    case unlock
    /// The vault page (SPEC.md §13.7): a page of its list, names only (answered while locked as
    /// `coffer list` is).
    case vaultItems(VaultPageQuery)
    /// What the page's form may hold: the kinds, match modes, and card and identity member lines.
    case vaultForm
    /// One item, every member (pinentry when locked).
    case vaultItem(VaultPageReference)
    /// An item's one-time code now, with its period and the seconds left.
    case vaultCode(VaultPageReference)
    /// A new item (no `recordIdentifier`), or the item as edited over `revision`.
    case vaultSave(vault: String?, edit: VaultPageEdit?, ItemContent)
    /// `coffer audit` of one's vault and teams; breaches (the range API) only when asked.
    case vaultAudit(breaches: Bool)
    /// Removes an item, if it is still at `revision`.
    case vaultDelete(VaultPageReference, revision: UInt64)
    /// A relying party's passkeys for the page (the sheet, conditional mediation): suggestions,
    /// answered while locked as passwords are; `unlock` (the person clicked "Unlock Coffer")
    /// asks for the master password when suggestions are off.
    case passkeyList(BrowserOrigin, PasskeyOptions, unlock: Bool)
    /// A sign-in with the passkey the person chose in the sheet.
    case passkeyGet(BrowserOrigin, PasskeyOptions, chosen: RecordID)
    /// A registration the person accepted in the sheet.
    case passkeyCreate(BrowserOrigin, PasskeyOptions, PasskeyAccount)
    /// A conditional registration (an automatic passkey upgrade, SPEC.md §13.5.2): onto `login`,
    /// the login the service worker saw Coffer fill in this tab within five minutes.
    case passkeyUpgrade(BrowserOrigin, PasskeyOptions, PasskeyAccount, login: RecordID)
    /// The notice's Undo: removes the passkey an upgrade of this host process just made.
    case passkeyUndo(BrowserOrigin, RecordID, credentialID: [UInt8])
    /// A relying party's signal (the Signal API): never answered with anything but `ok`.
    case passkeySignal(BrowserOrigin, relyingParty: String, PasskeySignal)

    /// What a page's Signal API call says (WebAuthn L3 §5.1.10–12).
    enum PasskeySignal: Equatable {
        case unknownCredential([UInt8])
        case allAcceptedCredentials(userHandle: [UInt8], accepted: [[UInt8]])
        case currentUserDetails(userHandle: [UInt8], name: String, displayName: String)
    }

    /// Whether the request may read or change a secret, and so counts as a use of an unlock
    /// session (re-arming its idle timeout): everything but asking what there is — the state,
    /// a page's suggestions, a search (SPEC.md §13.3).
    var readsSecrets: Bool {
        switch self {
        case .hello, .suggest, .search, .items, .textItems, .passkeySignal, .vaultItems, .vaultForm: false  // a signal is dropped while locked, never a use
        default: true
        }
    }

    /// The bytes an `attachmentAdd` adds.
    enum AttachmentContent: Equatable {
        case inline([UInt8])
        /// The parts `attachmentPart` sent under this upload's name.
        case upload(String)
    }

    /// What every passkey request carries (SPEC.md §13.3): the relying party's id, the hash of the
    /// `clientDataJSON` the service worker built, and the relying party's wishes.
    struct PasskeyOptions: Equatable {
        let relyingPartyIdentifier: String
        let clientDataHash: [UInt8]
        let userVerification: UserVerificationPreference
        /// `allowCredentials` of a sign-in, `excludeCredentials` of a registration.
        let credentials: [[UInt8]]
    }

    /// The account a registration is for.
    struct PasskeyAccount: Equatable {
        let userHandle: [UInt8]
        let userName: String
        let displayName: String
        let algorithms: [Int]
    }

    static let maximumSecretLength = 4096

    /// `kind`: `card` or `identity`, the kinds a form's payment and address fields take.
    static func fillableKind(_ object: JSONObject) throws(BrowserHostError) -> ItemKind {
        switch object["kind"]?.stringValue {
        case "card": .card
        case "identity": .identity
        default: throw .badRequest("kind must be card or identity")
        }
    }
    /// The largest attachment an answer carries (base64 keeps the answer under native
    /// messaging's 1 MB from the host); a larger one is saved (`attachmentSave`).
    static let maximumInlineAttachment = 512 * 1024

    init(_ object: JSONObject) throws(BrowserHostError) {
        guard let type = object["type"]?.stringValue else { throw .badRequest("no type") }
        func origin() throws(BrowserHostError) -> BrowserOrigin {
            guard let text = object["origin"]?.stringValue else { throw .badRequest("no origin") }
            return try BrowserOrigin(parsing: text)
        }
        func text(_ name: String, limit: Int = 4096) throws(BrowserHostError) -> String {
            guard let value = object[name]?.stringValue else { throw .badRequest("no \(name)") }
            guard value.utf8.count <= limit, !value.utf8.contains(0) else { throw .badRequest("\(name) too long or holds NUL") }
            return value
        }
        func record(_ name: String = "recordIdentifier") throws(BrowserHostError) -> RecordID {
            guard let value = object[name]?.stringValue, let id = try? RecordID(hex: value) else { throw .badRequest("\(name) is not a record id") }
            return id
        }
        /// A file's bytes in `content`, base64: at most what one message carries.
        func inlineContent() throws(BrowserHostError) -> [UInt8] {
            guard let content = Base64.decode(try text("content", limit: (Self.maximumInlineAttachment + 2) / 3 * 4)) else {
                throw .badRequest("content is not base64")
            }
            return content
        }
        /// An item of one vault (`vault`, SPEC.md §13.7).
        func reference() throws(BrowserHostError) -> VaultPageReference {
            VaultPageReference(id: try record(), vault: try Self.vaultName(object))
        }
        switch type {
        case "hello", "status": self = .hello
        case "suggest": self = .suggest(try origin())
        case "search": self = .search(try text("query", limit: 256).lowercased())
        case "fill":
            let trigger: Trigger
            switch object["trigger"]?.stringValue {
            case "choice": trigger = .choice
            case "command": trigger = .command
            case "pageLoad": trigger = .pageLoad(topFrame: object["topFrame"]?.boolValue == true)
            default: throw .badRequest("trigger must be choice, command or pageLoad")
            }
            self = .fill(try origin(), chosen: object["recordIdentifier"] == nil ? nil : try record(), trigger: trigger)
        case "saveState":
            let top: BrowserOrigin?
            if let text = object["topOrigin"]?.stringValue { top = try BrowserOrigin(parsing: text) } else if object["topOrigin"] == nil {
                top = nil
            } else {
                throw .badRequest("topOrigin is not an origin")
            }
            self = .saveState(try origin(), user: try text("user"), password: try text("password", limit: Self.maximumSecretLength), topOrigin: top)
        case "items": self = .items(try Self.fillableKind(object))
        case "saveCard":
            func number(_ name: String) -> Int? { object[name]?.int64Value.map(Int.init) }
            let numberText = try text("number", limit: 64), code = object["securityCode"] == nil ? "" : try text("securityCode", limit: 8)
            let card = CardMember(
                cardholder: object["cardholder"] == nil ? "" : try text("cardholder", limit: 256),
                number: (try? ItemRules.cardNumber(numberText)) ?? "", expiryMonth: number("expiryMonth"), expiryYear: number("expiryYear"),
                securityCode: (try? ItemRules.cardDigits(code, "security code", lengths: 3...4)) ?? "")
            guard !card.number.isEmpty, card.hasValidDates else { throw .badRequest("not a card number, or a month or year out of range") }
            self = .saveCard(try origin(), card)
        case "textItems": self = .textItems(query: object["query"] == nil ? "" : try text("query", limit: 256).lowercased())
        case "textMembers": self = .textMembers(try record())
        case "insertText": self = .insertText(try record(), member: try text("member", limit: 256))
        case "fillItem": self = .fillItem(try origin(), try record(), try Self.fillableKind(object))
        case "audit": self = .audit(try origin())
        case "save": self = .save(try origin(), user: try text("user"), password: try Self.nonEmpty(text("password", limit: Self.maximumSecretLength)))
        case "update": self = .update(try origin(), try record(), password: try Self.nonEmpty(text("password", limit: Self.maximumSecretLength)))
        case "reveal": self = .reveal(try record())
        case "attachments": self = .attachments(try record())
        case "attachmentGet": self = .attachmentGet(try record(), name: try text("name", limit: 1024))
        case "attachmentSave": self = .attachmentSave(try record(), name: try text("name", limit: 1024), vault: try Self.vaultName(object))
        case "attachmentAdd":
            let content: AttachmentContent = object["upload"] == nil ? .inline(try inlineContent()) : .upload(try text("upload", limit: 64))
            let mediaType = object["mediaType"].flatMap(\.stringValue).flatMap { $0.isEmpty ? nil : $0 } ?? Attachment.defaultMediaType
            self = .attachmentAdd(
                try record(), name: try text("name", limit: 1024), mediaType: mediaType, content: content, vault: try Self.vaultName(object))
        case "attachmentPart":
            self = .attachmentPart(upload: object["upload"] == nil ? nil : try text("upload", limit: 64), content: try inlineContent())
        case "generate":
            let length = object["length"].map { $0.int64Value.map(Int.init) } ?? 20
            guard let length, (8...128).contains(length) else { throw .badRequest("length must be 8 to 128") }
            let rules = object["rules"] == nil ? nil : try text("rules", limit: 1024)
            self = .generate(length: length, origin: object["origin"] == nil ? nil : try origin(), rules: rules)
        case "lock": self = .lock
        case "unlock": self = .unlock
        case "vaultItems": self = .vaultItems(try Self.vaultQuery(object))
        case "vaultForm": self = .vaultForm
        case "vaultAudit": self = .vaultAudit(breaches: object["breaches"]?.boolValue == true)
        case "vaultItem": self = .vaultItem(try reference())
        case "vaultCode": self = .vaultCode(try reference())
        case "vaultSave":
            guard let item = object["item"]?.objectValue else { throw .badRequest("item is the item's members") }
            let edit = object["recordIdentifier"] == nil ? nil : VaultPageEdit(id: try record(), revision: try Self.revision(object))
            self = .vaultSave(vault: try Self.vaultName(object), edit: edit, try VaultPageItem.content(item))
        case "vaultDelete": self = .vaultDelete(try reference(), revision: try Self.revision(object))
        case "passkeyList": self = .passkeyList(try origin(), try Self.passkeyOptions(object, hashed: false), unlock: object["unlock"]?.boolValue == true)
        case "passkeyGet": self = .passkeyGet(try origin(), try Self.passkeyOptions(object, hashed: true), chosen: try record())
        case "passkeyCreate":
            let account = try Self.account(object)
            if object["conditional"]?.boolValue == true {
                self = .passkeyUpgrade(try origin(), try Self.passkeyOptions(object, hashed: true), account, login: try record())
            } else {
                self = .passkeyCreate(try origin(), try Self.passkeyOptions(object, hashed: true), account)
            }
        case "passkeyUndo":
            guard let id = object["credentialId"]?.stringValue.flatMap(Base64.decodeURL), Passkey.credentialIDLengths.contains(id.count) else {
                throw .badRequest("credentialId must be base64url")
            }
            self = .passkeyUndo(try origin(), try record(), credentialID: id)
        case "passkeySignal":
            guard let rpId = object["rpId"]?.stringValue, (1...253).contains(rpId.utf8.count) else { throw .badRequest("rpId must be a domain") }
            func bytes(_ value: JSONValue?, _ lengths: ClosedRange<Int>, _ name: String) throws(BrowserHostError) -> [UInt8] {
                guard let decoded = value?.stringValue.flatMap(Base64.decodeURL), lengths.contains(decoded.count) else {
                    throw .badRequest("\(name) must be base64url")
                }
                return decoded
            }
            let signal: PasskeySignal
            switch object["signal"]?.stringValue {
            case "unknownCredential"?:
                signal = .unknownCredential(try bytes(object["credentialId"], Passkey.credentialIDLengths, "credentialId"))
            case "allAcceptedCredentials"?:
                guard let list = object["allAcceptedCredentialIds"]?.arrayValue, list.count <= 256 else { throw .badRequest("allAcceptedCredentialIds") }
                var accepted: [[UInt8]] = []
                for id in list { accepted.append(try bytes(id, Passkey.credentialIDLengths, "allAcceptedCredentialIds")) }
                signal = .allAcceptedCredentials(userHandle: try bytes(object["userId"], Passkey.userHandleLengths, "userId"), accepted: accepted)
            case "currentUserDetails"?:
                let name = try text("name", limit: 256), displayName = try text("displayName", limit: 256)
                signal = .currentUserDetails(userHandle: try bytes(object["userId"], Passkey.userHandleLengths, "userId"), name: name, displayName: displayName)
            default: throw .badRequest("signal must be unknownCredential, allAcceptedCredentials or currentUserDetails")
            }
            self = .passkeySignal(try origin(), relyingParty: rpId, signal)
        default: throw .unknownType(type)
        }
    }

    /// A registration's `user` (`id` 1–64 bytes, `name` and `displayName` at most 256 bytes) and
    /// `algorithms`.
    private static func account(_ object: JSONObject) throws(BrowserHostError) -> PasskeyAccount {
        guard let user = object["user"]?.objectValue, let handle = user["id"]?.stringValue.flatMap(Base64.decodeURL),
              (1...64).contains(handle.count)
        else { throw .badRequest("user.id must be 1 to 64 bytes, base64url") }
        let displayName = user["displayName"]?.stringValue ?? ""
        guard let name = user["name"]?.stringValue, name.utf8.count <= 256, displayName.utf8.count <= 256 else { throw .badRequest("user.name and user.displayName are strings of at most 256 bytes") }
        guard let algorithms = object["algorithms"]?.arrayValue, algorithms.count <= 32 else { throw .badRequest("algorithms") }
        let numbers = algorithms.compactMap { $0.int64Value.map(Int.init) }
        guard numbers.count == algorithms.count else { throw .badRequest("algorithms are COSE numbers") }
        return PasskeyAccount(userHandle: handle, userName: name, displayName: displayName, algorithms: numbers)
    }

    /// `rpId`, `clientDataHash` (32 bytes, base64url; a list needs none), `userVerification`
    /// and `credentials` (at most 64 ids of at most 1023 bytes).
    private static func passkeyOptions(_ object: JSONObject, hashed: Bool) throws(BrowserHostError) -> PasskeyOptions {
        guard let rpId = object["rpId"]?.stringValue, (1...253).contains(rpId.utf8.count) else { throw .badRequest("rpId must be a domain") }
        var hash: [UInt8] = []
        if hashed {
            guard let value = object["clientDataHash"]?.stringValue.flatMap(Base64.decodeURL), value.count == 32 else {
                throw .badRequest("clientDataHash must be 32 bytes, base64url")
            }
            hash = value
        }
        let preference = object["userVerification"]?.stringValue.flatMap(UserVerificationPreference.init(rawValue:)) ?? .preferred
        let list = object["credentials"]?.arrayValue ?? []
        let credentials = list.compactMap { $0.stringValue.flatMap(Base64.decodeURL) }.filter { Passkey.credentialIDLengths.contains($0.count) }
        guard list.count <= 64, credentials.count == list.count else { throw .badRequest("credentials must be at most 64 base64url ids") }
        return PasskeyOptions(relyingPartyIdentifier: rpId, clientDataHash: hash, userVerification: preference, credentials: credentials)
    }

    private static func nonEmpty(_ value: String) throws(BrowserHostError) -> String {
        guard !value.isEmpty else { throw .badRequest("an empty password") }
        return value
    }
}
