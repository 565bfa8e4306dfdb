import FoundationEssentials

/// What makes an item of kind `card` a payment card (SPEC.md §6.8): the members a checkout form
/// asks for, named as Bitwarden's and the Credential Exchange Format's `credit-card` are. The
/// number, security code and PIN are secrets: shown masked, never listed.
///
/// Months and years are numbers, not text, so that a fill can write them in whatever form a
/// page's `<select>` wants (`07`, `7`, `July`, `29`, `2029`); either may be missing (an export
/// that kept only one).
public struct CardMember: Equatable, Sendable {
    public var cardholder: String
    /// The primary account number as stored: digits only when a person typed it (SPEC.md §6.6).
    public var number: String
    /// The network (`Visa`, `Mastercard`); free text as an export names it.
    public var brand: String
    /// 1…12.
    public var expiryMonth: Int?
    /// Four digits.
    public var expiryYear: Int?
    /// The CVV, CVC or CID printed on the card.
    public var securityCode: String
    public var pin: String
    /// "Valid from", which some (UK, Maestro) cards print.
    public var startMonth: Int?
    public var startYear: Int?
    public var issueNumber: String

    public init(
        cardholder: String = "", number: String = "", brand: String = "", expiryMonth: Int? = nil, expiryYear: Int? = nil,
        securityCode: String = "", pin: String = "", startMonth: Int? = nil, startYear: Int? = nil, issueNumber: String = ""
    ) {
        self.cardholder = cardholder
        self.number = number
        self.brand = brand
        self.expiryMonth = expiryMonth
        self.expiryYear = expiryYear
        self.securityCode = securityCode
        self.pin = pin
        self.startMonth = startMonth
        self.startYear = startYear
        self.issueNumber = issueNumber
    }

    /// No member set: the same as no `card` member at all (writers omit it).
    public var isEmpty: Bool { self == CardMember() }

    /// Whether the months are 1…12 and the years have four digits (SPEC.md §6.8).
    public var hasValidDates: Bool {
        [expiryMonth, startMonth].allSatisfy { $0.map((1...12).contains) ?? true }
            && [expiryYear, startYear].allSatisfy { $0.map((1000...9999).contains) ?? true }
    }

    /// The network a number's first digits name (ISO/IEC 7812 issuer ranges as the networks
    /// publish them), or nil: Visa 4; Mastercard 51–55 and 2221–2720; American Express 34, 37;
    /// Discover 6011, 644–649, 65; JCB 3528–3589; Diners Club 300–305, 36, 38, 39; UnionPay 62.
    public static func brand(ofNumber number: String) -> String? {
        let digits = number.filter(\.isNumber)
        func prefix(_ count: Int) -> Int? { digits.count >= count ? Int(digits.prefix(count)) : nil }
        guard let two = prefix(2) else { return nil }
        if digits.hasPrefix("4") { return "Visa" }
        if (51...55).contains(two) || (prefix(4).map { (2221...2720).contains($0) } ?? false) { return "Mastercard" }
        if two == 34 || two == 37 { return "American Express" }
        if prefix(4) == 6011 || two == 65 || (prefix(3).map { (644...649).contains($0) } ?? false) { return "Discover" }
        if prefix(4).map({ (3528...3589).contains($0) }) ?? false { return "JCB" }
        if (prefix(3).map { (300...305).contains($0) } ?? false) || [36, 38, 39].contains(two) { return "Diners Club" }
        if two == 62 { return "UnionPay" }
        return nil
    }

    /// The number's last four digits, what a person recognises a card by ("•••• 4242").
    public var lastDigits: String { String(number.filter(\.isNumber).suffix(4)) }
}
