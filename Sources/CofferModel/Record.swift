import CofferSupport
import FoundationEssentials

/// What an item is. Logins are what the provider fills; the other kinds are never suggested to a
/// form (SPEC.md §6.2).
public enum ItemKind: String, CaseIterable, Sendable {
    case login
    case note
    case card
    case identity
    case sshKey = "ssh-key"
    /// A Secret Service item (SPEC.md §6.5): what an application stored through the desktop's keyring.
    case secret

    /// The byte an item entry of the index stores (SPEC.md §7.3).
    /// The position in the declaration, spelled out: `allCases` builds an array on every call,
    /// and a listing converts a million of these.
    package var indexByte: UInt8 {
        switch self {
        case .login: 0
        case .note: 1
        case .card: 2
        case .identity: 3
        case .sshKey: 4
        case .secret: 5
        }
    }

    package init?(indexByte: UInt8) {
        switch indexByte {
        case 0: self = .login
        case 1: self = .note
        case 2: self = .card
        case 3: self = .identity
        case 4: self = .sshKey
        case 5: self = .secret
        default: return nil
        }
    }
}

/// A named extra value of an item: a PIN, a security answer, a card number. Ordered; a name may
/// repeat (exporters allow it).
public struct RecordField: Equatable, Sendable {
    public var name: String
    public var value: String
    /// Shown masked, and treated as a secret (never listed, never in an error).
    public var hidden: Bool

    public init(name: String, value: String, hidden: Bool = false) {
        self.name = name
        self.value = value
        self.hidden = hidden
    }
}

/// A password an edit replaced, kept so that no edit is the one place a secret is lost.
public struct PasswordHistoryEntry: Equatable, Sendable {
    public var password: String
    /// When it stopped being the current password (whole seconds, UTC).
    public var replaced: Date

    public init(password: String, replaced: Date) {
        self.password = password
        self.replaced = replaced
    }
}

/// One item: the JSON document sealed inside a record file (SPEC.md §6.2).
///
/// - Warning: holds the password in ordinary memory; keep records short-lived and never log them.
public struct Record: Equatable, Sendable {
    public var id: RecordID
    /// Most specific first; what the identity store indexes and the provider matches. Empty is
    /// valid (a note, a card without a site).
    public var serviceIdentifiers: [CredentialServiceIdentifier]
    public var user: String
    public var password: String
    public var notes: String
    /// Extra named values, in order (PINs, security answers, a card's number).
    public var fields: [RecordField]
    public var created: Date
    public var modified: Date
    /// 1 on creation, +1 on every update; the identity index stores it to detect rollback.
    public var revision: UInt64
    /// How closely a request must match before a host may fill this record without a person
    /// choosing it (SPEC.md §8.1); `match` in the document, omitted when `host`.
    public var matchMode: MatchMode
    /// The title a person gave it ("GitLab", "Bank card"); may be empty.
    public var name: String
    public var kind: ItemKind
    /// Labels (folders and favourites of other managers become tags), in order, each once.
    public var tags: [String]
    /// An `otpauth://` URI (RFC 6238 TOTP, RFC 4226 HOTP, Steam), or nil.
    public var otp: String?
    /// Previous passwords, newest first, at most `maximumPasswordHistory`.
    public var passwordHistory: [PasswordHistoryEntry]
    /// A passkey for the login's relying party (SPEC.md §6.4), or nil.
    public var passkey: Passkey?
    /// A Secret Service item's collection, attributes and content type (SPEC.md §6.5), or nil.
    public var secretService: SecretServiceMember?
    /// A card's cardholder, number, expiry and code (SPEC.md §6.8), or nil.
    public var card: CardMember?
    /// An identity's name, address, contact details and document numbers (SPEC.md §6.8), or nil.
    public var identity: IdentityMember?
    /// Files the item carries (SPEC.md §6.7), in the order they were added.
    public var attachments: [Attachment]
    /// When a site reported the login's password unused (`reportUnusedPasswordCredential`): the
    /// account signs in another way now; `coffer audit` names it, nothing deletes it.
    public var passwordReportedUnused: Date?
    /// Members this version does not know, kept as read so that a rewrite preserves what a
    /// newer writer added (SPEC.md §6.2).
    public var otherMembers: JSONObject

    public static let maximumPasswordHistory = 20

    public init(
        id: RecordID, serviceIdentifiers: [CredentialServiceIdentifier], user: String, password: String,
        notes: String = "", fields: [RecordField] = [], created: Date, modified: Date, revision: UInt64,
        matchMode: MatchMode = .host, name: String = "", kind: ItemKind = .login, tags: [String] = [], otp: String? = nil,
        passwordHistory: [PasswordHistoryEntry] = [], passkey: Passkey? = nil, secretService: SecretServiceMember? = nil,
        card: CardMember? = nil, identity: IdentityMember? = nil, attachments: [Attachment] = [], passwordReportedUnused: Date? = nil, otherMembers: JSONObject = [:]
    ) {
        self.id = id
        self.serviceIdentifiers = serviceIdentifiers
        self.user = user
        self.password = password
        self.notes = notes
        self.fields = fields
        self.created = created
        self.modified = modified
        self.revision = revision
        self.matchMode = matchMode
        self.name = name
        self.kind = kind
        self.tags = tags
        self.otp = otp
        self.passwordHistory = passwordHistory
        self.passkey = passkey
        self.secretService = secretService
        self.card = card
        self.identity = identity
        self.attachments = attachments
        self.passwordReportedUnused = passwordReportedUnused
        self.otherMembers = otherMembers
    }

    /// The attachment named `name`, if any.
    public func attachment(named name: String) -> Attachment? { attachments.first { $0.name == name } }

    /// The value of the first field named `name`.
    public func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// What a person calls it: the name, else the first service, else the user.
    public var title: String { !name.isEmpty ? name : serviceIdentifiers.first?.identifier ?? user }
}
