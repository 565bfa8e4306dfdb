import CofferFormat

/// A card's and an identity's members as named lines (SPEC.md §6.8, §10.2): one key each
/// (`address` once per line of the street address), whether it is a secret, its values in an item,
/// and how a person's text for it is read (`ItemRules`). One table for every host: the CLI's text
/// form writes and reads these lines, and text insertion offers these values by these names.
public struct ItemMemberLine: Sendable {
    public let key: String
    public let kind: ItemKind
    /// A secret (a card's number, code and PIN, an identity's document numbers): masked when shown.
    public let masked: Bool
    /// The values the item holds (several for `address`; empty strings for none).
    public let values: @Sendable (ItemContent) -> [String]
    /// Reads one line's value into the item (`address` adds a line).
    public let read: @Sendable (inout ItemContent, String) throws(ItemRuleViolation) -> Void
}

extension ItemContent {
    public static let memberLines: [ItemMemberLine] = [
        card("cardholder", \.cardholder),
        card("number", masked: true) { [$0.number] } read: { card, text throws(ItemRuleViolation) in card.number = try ItemRules.cardNumber(text) },
        card("brand", \.brand),
        card("expiry") { [ItemRules.cardDateText(month: $0.expiryMonth, year: $0.expiryYear)] } read: { card, text throws(ItemRuleViolation) in
            (card.expiryMonth, card.expiryYear) = try ItemRules.cardDate(text)
        },
        card("security code", masked: true) { [$0.securityCode] } read: { card, text throws(ItemRuleViolation) in
            card.securityCode = try ItemRules.cardDigits(text, "security code", lengths: 3...4)
        },
        card("pin", masked: true) { [$0.pin] } read: { card, text throws(ItemRuleViolation) in
            card.pin = try ItemRules.cardDigits(text, "PIN", lengths: 4...12)
        },
        card("valid from") { [ItemRules.cardDateText(month: $0.startMonth, year: $0.startYear)] } read: { card, text throws(ItemRuleViolation) in
            (card.startMonth, card.startYear) = try ItemRules.cardDate(text)
        },
        card("issue number", \.issueNumber),
        identity("title", \.title), identity("given name", \.givenName), identity("middle name", \.middleName),
        identity("family name", \.familyName), identity("company", \.company),
        identity("address") { $0.addressLines.isEmpty ? [""] : $0.addressLines } read: { identity, text throws(ItemRuleViolation) in
            if !text.trimmingSpaces().isEmpty { identity.addressLines.append(text) }
        },
        identity("city", \.city), identity("region", \.region), identity("postal code", \.postalCode),
        identity("country") { [$0.country] } read: { identity, text throws(ItemRuleViolation) in identity.country = try ItemRules.country(text) },
        identity("phone", \.phone), identity("email", \.email),
        identity("national id", \.nationalIdentifier, masked: true), identity("passport number", \.passportNumber, masked: true),
        identity("license number", \.licenseNumber, masked: true),
    ]

    public static let memberLineKeys = memberLines.map(\.key)

    // MARK: The table's rows

    private static func card(_ key: String, _ path: WritableKeyPath<CardMember, String> & Sendable) -> ItemMemberLine {
        card(key) { [$0[keyPath: path]] } read: { card, text in card[keyPath: path] = text }
    }

    private static func card(
        _ key: String, masked: Bool = false, _ values: @escaping @Sendable (CardMember) -> [String],
        read: @escaping @Sendable (inout CardMember, String) throws(ItemRuleViolation) -> Void
    ) -> ItemMemberLine {
        line(key, .card, \.card, empty: CardMember(), masked: masked, values, read: read)
    }

    private static func identity(_ key: String, _ path: WritableKeyPath<IdentityMember, String> & Sendable, masked: Bool = false) -> ItemMemberLine {
        identity(key, masked: masked) { [$0[keyPath: path]] } read: { identity, text in identity[keyPath: path] = text }
    }

    private static func identity(
        _ key: String, masked: Bool = false, _ values: @escaping @Sendable (IdentityMember) -> [String],
        read: @escaping @Sendable (inout IdentityMember, String) throws(ItemRuleViolation) -> Void
    ) -> ItemMemberLine {
        line(key, .identity, \.identity, empty: IdentityMember(), masked: masked, values, read: read)
    }

    /// A line of the member at `path` of `content` (nil read as `empty`).
    private static func line<Member: Sendable>(
        _ key: String, _ kind: ItemKind, _ path: WritableKeyPath<ItemContent, Member?> & Sendable, empty: Member, masked: Bool,
        _ values: @escaping @Sendable (Member) -> [String], read: @escaping @Sendable (inout Member, String) throws(ItemRuleViolation) -> Void
    ) -> ItemMemberLine {
        ItemMemberLine(key: key, kind: kind, masked: masked, values: { values($0[keyPath: path] ?? empty) }) { content, text throws(ItemRuleViolation) in
            var member = content[keyPath: path] ?? empty
            try read(&member, text)
            content[keyPath: path] = member
        }
    }
}
