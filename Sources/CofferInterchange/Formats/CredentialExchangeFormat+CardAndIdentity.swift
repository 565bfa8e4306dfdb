import CofferProvider
import FoundationEssentials

/// A card and an identity (SPEC.md §6.8) in CXF 1.0: a card is a `credit-card` credential; an
/// identity a `person-name`, an `address`, and a `passport`, `drivers-license` and
/// `identity-document` for its document numbers. What CXF has no place for — a month or year
/// without the other, an issue number, a company, an e-mail, a region that is no ISO 3166-2
/// code — travels in the `coffer-item` extension's `card` and `identity`, as the record writes
/// them. Read from another exporter, a member of these credentials Coffer has no member for (a
/// passport's birth date, a licence's class) becomes a field named `TYPE.MEMBER`.
extension CredentialExchangeFormat {
    static func credentials(of card: CardMember, extra: inout JSONObject) -> [JSONValue] {
        var credential: JSONObject = ["type": "credit-card"]
        func put(_ name: String, _ value: String, _ fieldType: String = "string") {
            if !value.isEmpty { credential[name] = ["fieldType": .string(fieldType), "value": .string(value)] }
        }
        put("number", card.number, "concealed-string")
        put("fullName", card.cardholder)
        put("cardType", card.brand)
        put("verificationNumber", card.securityCode, "concealed-string")
        put("pin", card.pin, "concealed-string")
        put("expiryDate", yearMonth(card.expiryMonth, card.expiryYear), "year-month")
        put("validFrom", yearMonth(card.startMonth, card.startYear), "year-month")
        var rest = CardMember(issueNumber: card.issueNumber)
        if (card.expiryMonth == nil) != (card.expiryYear == nil) { (rest.expiryMonth, rest.expiryYear) = (card.expiryMonth, card.expiryYear) }
        if (card.startMonth == nil) != (card.startYear == nil) { (rest.startMonth, rest.startYear) = (card.startMonth, card.startYear) }
        if !rest.isEmpty { extra["card"] = rest.json(omittingDefaults: true) }
        return [.object(credential)]
    }

    static func credentials(of identity: IdentityMember, extra: inout JSONObject) -> [JSONValue] {
        var credentials: [JSONValue] = []
        func credential(_ type: String, _ members: [(String, String, String)]) {
            var object: JSONObject = ["type": .string(type)]
            for (name, value, fieldType) in members where !value.isEmpty {
                object[name] = ["fieldType": .string(fieldType), "value": .string(value)]
            }
            if object.count > 1 { credentials.append(.object(object)) }
        }
        let regionIsCode = isSubdivisionCode(identity.region)
        credential("person-name", [
            ("title", identity.title, "string"), ("given", identity.givenName, "string"), ("given2", identity.middleName, "string"),
            ("surname", identity.familyName, "string"),
        ])
        credential("address", [
            ("streetAddress", identity.addressLines.joined(separator: "\n"), "string"), ("postalCode", identity.postalCode, "string"),
            ("city", identity.city, "string"), ("territory", regionIsCode ? identity.region : "", "subdivision-code"),
            ("country", identity.country, "country-code"), ("tel", identity.phone, "string"),
        ])
        credential("passport", [("passportNumber", identity.passportNumber, "string")])
        credential("drivers-license", [("licenseNumber", identity.licenseNumber, "string")])
        credential("identity-document", [("identificationNumber", identity.nationalIdentifier, "string")])
        let rest = IdentityMember(
            company: identity.company, region: regionIsCode ? "" : identity.region, email: identity.email)
        if !rest.isEmpty { extra["identity"] = rest.json(omittingDefaults: true) }
        return credentials
    }

    /// `YYYY-MM`, CXF's `year-month`, when both are known.
    private static func yearMonth(_ month: Int?, _ year: Int?) -> String {
        guard let month, let year else { return "" }
        return "\(year)-" + (month < 10 ? "0\(month)" : "\(month)")
    }

    /// ISO 3166-2's form: a country code, a dash, one to three letters or digits (`FR-IDF`, `US-CA`).
    private static func isSubdivisionCode(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0].count == 2 && parts[0].allSatisfy { $0.isASCII && $0.isUppercase }
            && (1...3).contains(parts[1].count) && parts[1].allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    // MARK: Import

    /// The CXF credential types of a card or an identity, and the member of each Coffer keeps.
    static let cardAndIdentityTypes: Set<String> = ["credit-card", "address", "person-name", "passport", "drivers-license", "identity-document"]

    /// Reads one such credential into `draft` (making it a card or an identity); members Coffer
    /// has none for become fields `TYPE.MEMBER`.
    static func read(_ credential: JSONObject, type: String, into draft: inout RecordDraft, report: inout ImportReport) {
        var card = draft.card ?? CardMember(), identity = draft.identity ?? IdentityMember()
        for (name, value) in credential where name != "type" && name != "id" {
            guard let field = value.objectValue, let text = field["value"]?.stringValue else { continue }
            let kept: Bool
            switch (type, name) {
            case ("credit-card", "number"): card.number = text; kept = true
            case ("credit-card", "fullName"): card.cardholder = text; kept = true
            case ("credit-card", "cardType"): card.brand = text; kept = true
            case ("credit-card", "verificationNumber"): card.securityCode = text; kept = true
            case ("credit-card", "pin"): card.pin = text; kept = true
            case ("credit-card", "expiryDate"): kept = readYearMonth(text) { (card.expiryMonth, card.expiryYear) = ($0, $1) }
            case ("credit-card", "validFrom"): kept = readYearMonth(text) { (card.startMonth, card.startYear) = ($0, $1) }
            case ("person-name", "title"): identity.title = text; kept = true
            case ("person-name", "given"): identity.givenName = text; kept = true
            case ("person-name", "given2"): identity.middleName = text; kept = true
            case ("person-name", "surname"): identity.familyName = text; kept = true
            case ("address", "streetAddress"):
                identity.addressLines = text.split(whereSeparator: \.isNewline).map(String.init)
                kept = identity.addressLines.count <= IdentityMember.maximumAddressLines
                if !kept { identity.addressLines = [] }
            case ("address", "postalCode"): identity.postalCode = text; kept = true
            case ("address", "city"): identity.city = text; kept = true
            case ("address", "territory"): identity.region = text; kept = true
            case ("address", "country"): kept = readCountry(text) { identity.country = $0 }
            case ("address", "tel"): identity.phone = text; kept = true
            case ("passport", "passportNumber"): identity.passportNumber = text; kept = true
            case ("drivers-license", "licenseNumber"): identity.licenseNumber = text; kept = true
            case ("identity-document", "identificationNumber"): identity.nationalIdentifier = text; kept = true
            default: kept = false
            }
            if kept {
                report.kept(type, as: type == "credit-card" ? "card" : "identity", value: text)
            } else {
                let hidden = field["fieldType"]?.stringValue == "concealed-string"
                draft.fields.append(RecordField(name: "\(type).\(name)", value: text, hidden: hidden))
                report.kept("\(type).\(name)", as: hidden ? "hidden fields" : "fields", value: text)
            }
        }
        if type == "credit-card" {
            draft.kind = .card
            draft.card = card
        } else {
            draft.kind = .identity
            draft.identity = identity
        }
    }

    /// The `coffer-item` extension's `card` and `identity`: the members CXF has no place for,
    /// laid over what the credentials gave.
    static func readExtension(_ extra: JSONObject, into draft: inout RecordDraft, at origin: String) throws(ImportError) {
        if let value = extra["card"] {
            guard let rest = CardMember(json: value) else {
                throw .malformed(location: origin, reason: "the coffer-item extension's card is not as SPEC.md §6.8 writes it")
            }
            var card = draft.card ?? CardMember()
            if !rest.issueNumber.isEmpty { card.issueNumber = rest.issueNumber }
            if rest.expiryMonth != nil || rest.expiryYear != nil { (card.expiryMonth, card.expiryYear) = (rest.expiryMonth, rest.expiryYear) }
            if rest.startMonth != nil || rest.startYear != nil { (card.startMonth, card.startYear) = (rest.startMonth, rest.startYear) }
            draft.card = card
        }
        if let value = extra["identity"] {
            guard let rest = IdentityMember(json: value) else {
                throw .malformed(location: origin, reason: "the coffer-item extension's identity is not as SPEC.md §6.8 writes it")
            }
            var identity = draft.identity ?? IdentityMember()
            if !rest.company.isEmpty { identity.company = rest.company }
            if !rest.email.isEmpty { identity.email = rest.email }
            if !rest.region.isEmpty { identity.region = rest.region }
            draft.identity = identity
        }
    }

    /// `YYYY-MM` into `set`; false (kept as a field) for any other text.
    private static func readYearMonth(_ text: String, _ set: (Int, Int) -> Void) -> Bool {
        guard let date = try? ItemRules.cardDate(text), let month = date.month, let year = date.year, text.count == 7 else { return false }
        set(month, year)
        return true
    }

    private static func readCountry(_ text: String, _ set: (String) -> Void) -> Bool {
        guard let code = try? ItemRules.country(text) else { return false }
        set(code)
        return true
    }
}
