import CofferFormat
/// A member of an item that broke a rule, and why: what a host shows beside the member (the
/// CLI names the text's line, a form the field). SPEC.md §6.6.
public struct ItemRuleViolation: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Member: String, Sendable {
        case kind, name, user, password, service, tag, field, otp, match, notes, card, identity
    }

    public let member: Member
    public let reason: String
    public var description: String { reason }

    public init(_ member: Member, _ reason: String) {
        self.member = member
        self.reason = reason
    }
}

/// The rules of an item's members (SPEC.md §6.2, §6.6), in one place: every host that reads a
/// member from a person (the CLI's options and text form, a vault page's form) reads it here,
/// and the vault checks every write against the same rules.
public enum ItemRules {
    public static let maximumServiceLength = 2048
    public static let maximumUserLength = 4096

    /// An item kind by its name (`login`, `note`, `card`, `identity`, `ssh-key`, `secret`).
    public static func kind(_ text: String) throws(ItemRuleViolation) -> ItemKind {
        guard let kind = ItemKind(rawValue: text.trimmingSpaces()) else {
            throw ItemRuleViolation(.kind, "kind must be one of \(ItemKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }

    /// A match mode by its name (`site`, `host`, `exact`, `never`).
    public static func matchMode(_ text: String) throws(ItemRuleViolation) -> MatchMode {
        guard let mode = MatchMode(rawValue: text.trimmingSpaces()) else {
            throw ItemRuleViolation(.match, "match must be site, host, exact or never")
        }
        return mode
    }

    /// A service as a person writes it: a domain or a URL (§8.1), trimmed.
    public static func service(_ text: String) throws(ItemRuleViolation) -> CredentialServiceIdentifier {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { throw ItemRuleViolation(.service, "an empty url") }
        let service = CredentialServiceIdentifier(parsing: trimmed)
        try check(service)
        return service
    }

    /// Tags as a person lists them, comma-separated: trimmed, empty ones dropped, the same tag
    /// kept once.
    public static func tags(_ text: String) -> [String] {
        var tags: [String] = []
        for tag in text.split(separator: ",").map({ $0.trimmingSpaces() }) where !tag.isEmpty && !tags.contains(tag) {
            tags.append(tag)
        }
        return tags
    }

    /// What `otp` stores for what a person gave (an `otpauth://` URI, or a bare base32 or
    /// `steam://` secret labelled `account`); nil for an empty text (no one-time code).
    public static func oneTimeCode(_ text: String, account: String) throws(ItemRuleViolation) -> String? {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return nil }
        do { return try OneTimeCodeParameters.storedValue(of: trimmed, account: account) } catch {
            throw ItemRuleViolation(.otp, "\(error)")
        }
    }

    /// The rules of a card's and an identity's members every write keeps (SPEC.md §6.8): each
    /// only on its kind, months 1–12, four-digit years, a country code of two letters.
    static func check(card: CardMember?, identity: IdentityMember?, kind: ItemKind) throws(ItemRuleViolation) {
        if let card, !card.isEmpty {
            guard kind == .card else { throw ItemRuleViolation(.card, "a card's members on an item of kind \(kind.rawValue)") }
            guard card.hasValidDates else { throw ItemRuleViolation(.card, "a card's month must be 1–12 and its year four digits") }
        }
        if let identity, !identity.isEmpty {
            guard kind == .identity else { throw ItemRuleViolation(.identity, "an identity's members on an item of kind \(kind.rawValue)") }
            guard identity.isWellFormed else {
                throw ItemRuleViolation(.identity, "an identity's country is a two-letter ISO 3166 code, and its address at most \(IdentityMember.maximumAddressLines) lines")
            }
        }
    }

    static func check(_ service: CredentialServiceIdentifier) throws(ItemRuleViolation) {
        guard !service.identifier.isEmpty, service.identifier.utf8.count <= maximumServiceLength, !service.identifier.utf8.contains(0) else {
            throw ItemRuleViolation(.service, "invalid service identifier")
        }
    }

    /// The rules every written item keeps, whoever wrote it (an edit, an import): the first
    /// member that breaks one. A person's edit keeps those of `ItemContent.check()` too.
    static func check(services: [CredentialServiceIdentifier], user: String, tags: [String], otp: String?) throws(ItemRuleViolation) {
        for service in services { try check(service) }
        guard user.utf8.count <= maximumUserLength else { throw ItemRuleViolation(.user, "user name longer than \(maximumUserLength) bytes") }
        guard Set(tags).count == tags.count else { throw ItemRuleViolation(.tag, "a tag is given twice") }
        if let otp {
            do { _ = try OneTimeCodeParameters(parsing: otp) } catch { throw ItemRuleViolation(.otp, "\(error)") }
        }
    }
}
