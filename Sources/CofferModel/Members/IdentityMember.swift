import FoundationEssentials

/// What makes an item of kind `identity` a person's contact details (SPEC.md §6.8): the members
/// an address or sign-up form asks for, and the document numbers Bitwarden and 1Password keep.
/// The identity's user name is the record's `user`. The document numbers are secrets: shown
/// masked, never listed.
public struct IdentityMember: Equatable, Sendable {
    public var title: String
    public var givenName: String
    public var middleName: String
    public var familyName: String
    public var company: String
    /// The street address, one element per line, at most `maximumAddressLines`.
    public var addressLines: [String]
    public var city: String
    /// State, province or county.
    public var region: String
    public var postalCode: String
    /// ISO 3166-1 alpha-2, upper case (`DE`, `US`), or empty.
    public var country: String
    public var phone: String
    public var email: String
    /// A social security or national insurance number.
    public var nationalIdentifier: String
    public var passportNumber: String
    public var licenseNumber: String

    public static let maximumAddressLines = 8

    public init(
        title: String = "", givenName: String = "", middleName: String = "", familyName: String = "", company: String = "",
        addressLines: [String] = [], city: String = "", region: String = "", postalCode: String = "", country: String = "",
        phone: String = "", email: String = "", nationalIdentifier: String = "", passportNumber: String = "", licenseNumber: String = ""
    ) {
        self.title = title
        self.givenName = givenName
        self.middleName = middleName
        self.familyName = familyName
        self.company = company
        self.addressLines = addressLines
        self.city = city
        self.region = region
        self.postalCode = postalCode
        self.country = country
        self.phone = phone
        self.email = email
        self.nationalIdentifier = nationalIdentifier
        self.passportNumber = passportNumber
        self.licenseNumber = licenseNumber
    }

    /// No member set: the same as no `identity` member at all (writers omit it).
    public var isEmpty: Bool { self == IdentityMember() }

    /// The name as one line, given name first ("Ada M. Lovelace" without the title).
    public var fullName: String {
        [givenName, middleName, familyName].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Whether `country` is empty or two upper-case ASCII letters, and the address has at most
    /// `maximumAddressLines` lines (SPEC.md §6.8).
    public var isWellFormed: Bool {
        addressLines.count <= Self.maximumAddressLines
            && (country.isEmpty || (country.utf8.count == 2 && country.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A }))
    }
}
