import CofferFormat
/// How a card's and an identity's members are read from what a person types (SPEC.md §6.6,
/// §6.8): one reading for every host (the CLI's text form and prompts, an import, a vault page).
extension ItemRules {
    /// A card number as a person types it (`4111 1111 1111 1111`, `4111-1111-…`): stored as its
    /// digits, 8–19 of them (ISO/IEC 7812); empty is no number.
    public static func cardNumber(_ text: String) throws(ItemRuleViolation) -> String {
        let digits = text.filter { $0 != " " && $0 != "-" && $0 != "\t" }
        guard !digits.isEmpty else { return "" }
        guard digits.allSatisfy(\.isASCIIDigit), (8...19).contains(digits.count) else {
            throw ItemRuleViolation(.card, "a card number is 8 to 19 digits (spaces and dashes between them are fine)")
        }
        return digits
    }

    /// A security code (3 or 4 digits) or a PIN (4 to 12), by `name`; empty is none.
    public static func cardDigits(_ text: String, _ name: String, lengths: ClosedRange<Int>) throws(ItemRuleViolation) -> String {
        let digits = text.trimmingSpaces()
        guard digits.isEmpty || (digits.allSatisfy(\.isASCIIDigit) && lengths.contains(digits.count)) else {
            throw ItemRuleViolation(.card, "a \(name) is \(lengths.lowerBound) to \(lengths.upperBound) digits")
        }
        return digits
    }

    /// A card's month and year as printed or typed: `07/29`, `7/2029`, `2029-07`, `07` (a month
    /// alone), `2029` (a year alone); a two-digit year is 20YY. Empty is neither.
    public static func cardDate(_ text: String) throws(ItemRuleViolation) -> (month: Int?, year: Int?) {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return (nil, nil) }
        let parts = trimmed.split(whereSeparator: { $0 == "/" || $0 == "-" || $0 == " " }).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else { throw dateViolation }
        func year(_ text: String) -> Int? {
            switch text.count {
            case 2: 2000 + Int(text)!
            case 4: Int(text)
            default: nil
            }
        }
        func month(_ text: String) -> Int? { text.count <= 2 ? Int(text).flatMap { (1...12).contains($0) ? $0 : nil } : nil }
        switch parts.count {
        case 1 where parts[0].count == 4: return (nil, year(parts[0]))
        case 1: if let month = month(parts[0]) { return (month, nil) }
        case 2 where parts[0].count == 4: if let month = month(parts[1]), let year = year(parts[0]) { return (month, year) }
        case 2: if let month = month(parts[0]), let year = year(parts[1]) { return (month, year) }
        default: break
        }
        throw dateViolation
    }

    private static var dateViolation: ItemRuleViolation {
        ItemRuleViolation(.card, "a card date is MM/YY or MM/YYYY (a month 01–12)")
    }

    /// A card's month and year as `cardDate` reads them back: `07/2029`, `07`, `2029`, or "".
    public static func cardDateText(month: Int?, year: Int?) -> String {
        let monthText = month.map { $0 < 10 ? "0\($0)" : "\($0)" }
        return [monthText, year.map(String.init)].compactMap { $0 }.joined(separator: "/")
    }

    /// A country as a person or an export names it — its ISO 3166-1 alpha-2 or alpha-3 code or
    /// its English name, in any case — as the alpha-2 code a record stores; empty is none.
    public static func country(_ text: String) throws(ItemRuleViolation) -> String {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return "" }
        let folded = trimmed.uppercased()
        if let match = Countries.all.first(where: { $0.alpha2 == folded || $0.alpha3 == folded || $0.names.contains { $0.uppercased() == folded } }) {
            return match.alpha2
        }
        throw ItemRuleViolation(.identity, "no country '\(trimmed.prefix(40))': give its ISO 3166 code (DE, US) or its English name")
    }

    /// The English name of the country with alpha-2 `code`, for a person reading it.
    public static func countryName(_ code: String) -> String? {
        Countries.all.first { $0.alpha2 == code }?.names.first
    }

    /// The alpha-3 code of the country with alpha-2 `code` (what some forms' options hold).
    public static func countryAlpha3(_ code: String) -> String? {
        Countries.all.first { $0.alpha2 == code }?.alpha3
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
