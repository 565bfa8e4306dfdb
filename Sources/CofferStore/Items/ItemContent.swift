import CofferFormat
/// The members of an item a person writes: what every host creates and edits items with — the
/// CLI's `add` and `edit` (its options and its text form), a vault page's form. The rules are
/// `ItemRules`'; a host shows their reasons and keeps none of its own (SPEC.md §6.6).
///
/// What is not here is not a person's to write, and an edit keeps it: the id, the dates and
/// revision, the password history (the vault adds to it), a passkey, a Secret Service item's
/// collection and attributes.
public struct ItemContent: Equatable, Sendable {
    public var kind: ItemKind
    public var name: String
    public var user: String
    public var password: String
    public var services: [CredentialServiceIdentifier]
    public var tags: [String]
    public var matchMode: MatchMode
    public var fields: [RecordField]
    /// The one-time code as stored (`ItemRules.oneTimeCode` reads what a person gives).
    public var otp: String?
    public var notes: String
    /// A card's members (SPEC.md §6.8): only on a `card`; nil when it has none.
    public var card: CardMember?
    /// An identity's members (SPEC.md §6.8): only on an `identity`; nil when it has none.
    public var identity: IdentityMember?

    public init(
        kind: ItemKind = .login, name: String = "", user: String = "", password: String = "",
        services: [CredentialServiceIdentifier] = [], tags: [String] = [], matchMode: MatchMode = .host,
        fields: [RecordField] = [], otp: String? = nil, notes: String = "",
        card: CardMember? = nil, identity: IdentityMember? = nil
    ) {
        self.kind = kind
        self.name = name
        self.user = user
        self.password = password
        self.services = services
        self.tags = tags
        self.matchMode = matchMode
        self.fields = fields
        self.otp = otp
        self.notes = notes
        self.card = card
        self.identity = identity
    }

    /// The item's members as they are.
    public init(_ record: Record) {
        self.init(
            kind: record.kind, name: record.name, user: record.user, password: record.password, services: record.serviceIdentifiers,
            tags: record.tags, matchMode: record.matchMode, fields: record.fields, otp: record.otp, notes: record.notes,
            card: record.card, identity: record.identity)
    }

    /// Checks every member: the rules of every write, and those of a person's (no empty tag, no
    /// field without a name). Throws the first member that breaks one.
    public func check() throws(ItemRuleViolation) {
        try ItemRules.check(services: services, user: user, tags: tags, otp: otp)
        try ItemRules.check(card: card, identity: identity, kind: kind)
        guard !tags.contains(where: { $0.trimmingSpaces().isEmpty }) else { throw ItemRuleViolation(.tag, "an empty tag") }
        guard !fields.contains(where: \.name.isEmpty) else { throw ItemRuleViolation(.field, "a field without a name") }
    }

    /// Writes the members into `record`; what is not a member here stays.
    public func apply(to record: inout Record) {
        record.kind = kind
        record.name = name
        record.user = user
        record.password = password
        record.serviceIdentifiers = services
        record.tags = tags
        record.matchMode = matchMode
        record.fields = fields
        record.otp = otp
        record.notes = notes
        record.card = card.flatMap { $0.isEmpty ? nil : $0 }
        record.identity = identity.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A new item of these members.
    public var draft: RecordDraft { RecordDraft(self) }

    /// The members whose values differ in `other` (for a person told that an item changed while
    /// they edited it: which members, never their values).
    public func changedMembers(in other: ItemContent) -> [ItemRuleViolation.Member] {
        let members: [(ItemRuleViolation.Member, Bool)] = [
            (.password, password != other.password), (.name, name != other.name), (.kind, kind != other.kind),
            (.user, user != other.user), (.service, services != other.services), (.tag, tags != other.tags),
            (.match, matchMode != other.matchMode), (.field, fields != other.fields), (.otp, otp != other.otp),
            (.notes, notes != other.notes), (.card, (card ?? CardMember()) != (other.card ?? CardMember())),
            (.identity, (identity ?? IdentityMember()) != (other.identity ?? IdentityMember())),
        ]
        return members.filter(\.1).map(\.0)
    }
}
