import CofferProvider

/// Named values of an exporter without card or identity items (KeePass's custom strings) that are
/// a card's or an identity's members by their names (SPEC.md §6.8, §12): `Card Number`, `CVV`,
/// `Expiry`; `First Name`, `Street`, `City`. Names are compared in lower case with everything but
/// letters and digits removed, in English, German, French and Spanish. An entry becomes a card
/// when it has no password and no URL and a card number that §6.6 reads; an identity when it has
/// neither and has a name and a part of an address. A value a member's rule refuses stays a field.
enum CardAndIdentityAttributes {
    enum Member {
        case card(WritableKeyPath<CardMember, String>), cardExpiry, cardStart
        case identity(WritableKeyPath<IdentityMember, String>), addressLine, country
    }

    /// The letters of the four languages' names written without their accents (`Straße` is `strasse`).
    private static let plainLetters: [Character: String] = [
        "ß": "ss", "ä": "a", "ö": "o", "ü": "u", "é": "e", "è": "e", "ê": "e", "á": "a", "í": "i", "ó": "o", "ú": "u", "ñ": "n", "ç": "c",
    ]

    static func member(named name: String) -> Member? {
        let key = name.lowercased().reduce(into: "") { key, character in
            if let plain = Self.plainLetters[character] { key += plain } else if character.isLetter || character.isNumber { key.append(character) }
        }
        switch key {
        case "cardnumber", "ccnumber", "creditcardnumber", "cardno", "kartennummer", "numerodecarte", "numerodetarjeta": return .card(\.number)
        case "cardholder", "cardholdername", "nameoncard", "karteninhaber", "titulaire", "titular": return .card(\.cardholder)
        case "brand", "cardtype", "cardbrand", "kartentyp": return .card(\.brand)
        case "expiry", "expirydate", "expiration", "expirationdate", "expires", "validthru", "validuntil", "gultigbis", "gueltigbis":
            return .cardExpiry
        case "cvv", "cvc", "cvv2", "cvc2", "csc", "cid", "securitycode", "verificationnumber", "kartenprufnummer": return .card(\.securityCode)
        case "pin": return .card(\.pin)
        case "validfrom", "startdate": return .cardStart
        case "issuenumber": return .card(\.issueNumber)
        case "salutation", "anrede", "honorific": return .identity(\.title)
        case "firstname", "givenname", "forename", "vorname", "prenom", "nombre": return .identity(\.givenName)
        case "middlename", "middleinitial": return .identity(\.middleName)
        case "lastname", "familyname", "surname", "nachname", "nomdefamille", "apellido", "apellidos": return .identity(\.familyName)
        case "company", "organization", "organisation", "firma", "entreprise", "empresa": return .identity(\.company)
        case "address", "street", "streetaddress", "address1", "address2", "address3", "strasse", "adresse", "direccion": return .addressLine
        case "city", "town", "stadt", "ort", "ville", "ciudad": return .identity(\.city)
        case "state", "region", "province", "county", "bundesland": return .identity(\.region)
        case "postalcode", "zip", "zipcode", "postcode", "plz", "postleitzahl", "codepostal", "codigopostal": return .identity(\.postalCode)
        case "country", "land", "pays", "pais": return .country
        case "phone", "telephone", "mobile", "tel", "telefon", "telefono": return .identity(\.phone)
        case "email", "mail", "courriel", "correo": return .identity(\.email)
        case "ssn", "socialsecuritynumber", "nationalid", "nationalinsurancenumber": return .identity(\.nationalIdentifier)
        case "passportnumber", "passport", "reisepassnummer": return .identity(\.passportNumber)
        case "licensenumber", "licencenumber", "driverslicense", "driverslicence", "fuhrerscheinnummer": return .identity(\.licenseNumber)
        default: return nil
        }
    }

    /// Makes `draft` a card or an identity from `attributes` when they say it is one; returns the
    /// names of the attributes that became members (the others stay fields).
    static func read(_ attributes: [(key: String, value: String)], into draft: inout RecordDraft) -> Set<String> {
        guard draft.kind == .login, draft.password.isEmpty, draft.serviceIdentifiers.isEmpty else { return [] }
        let named = attributes.compactMap { attribute in member(named: attribute.key).map { (attribute, $0) } }
        var card = CardMember(), identity = IdentityMember(), cardKeys: Set<String> = [], identityKeys: Set<String> = []
        for ((key, value), member) in named where !value.isEmpty {
            switch member {
            case .card(\CardMember.number):
                guard let number = try? ItemRules.cardNumber(value), !number.isEmpty else { continue }
                card.number = number
                cardKeys.insert(key)
            case .card(let path):
                card[keyPath: path] = value
                cardKeys.insert(key)
            case .cardExpiry, .cardStart:
                guard let date = try? ItemRules.cardDate(value) else { continue }
                if case .cardExpiry = member { (card.expiryMonth, card.expiryYear) = date } else { (card.startMonth, card.startYear) = date }
                cardKeys.insert(key)
            case .identity(let path):
                identity[keyPath: path] = value
                identityKeys.insert(key)
            case .addressLine:
                guard identity.addressLines.count < IdentityMember.maximumAddressLines else { continue }
                identity.addressLines += value.split(whereSeparator: \.isNewline).map(String.init)
                identity.addressLines = Array(identity.addressLines.prefix(IdentityMember.maximumAddressLines))
                identityKeys.insert(key)
            case .country:
                guard let code = try? ItemRules.country(value) else { continue }
                identity.country = code
                identityKeys.insert(key)
            }
        }
        if !card.number.isEmpty {
            draft.kind = .card
            draft.card = card
            return cardKeys
        }
        let hasName = !identity.givenName.isEmpty || !identity.familyName.isEmpty
        let hasAddress = !identity.addressLines.isEmpty || !identity.city.isEmpty || !identity.postalCode.isEmpty
        guard hasName && hasAddress else { return [] }
        draft.kind = .identity
        draft.identity = identity
        return identityKeys
    }
}
