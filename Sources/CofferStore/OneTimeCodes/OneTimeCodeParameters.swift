import CofferFormat
/// A one-time-code secret and how to turn it into codes, read from the `otp` member of a record
/// (SPEC.md §6.2): an `otpauth://` URI in Google Authenticator's Key Uri Format, as every
/// authenticator app and password manager exports it, or a bare base32 secret (a TOTP of the
/// defaults). Steam Guard codes are written `otpauth://steam/…`, `…&encoder=steam` (KeePassXC)
/// or `steam://SECRET` (Bitwarden).
public struct OneTimeCodeParameters: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// RFC 6238: a code per time step.
        case totp
        /// RFC 4226: a code per counter value, which goes up by one with every code used.
        case hotp
        /// Steam Guard: TOTP (SHA-1, 30 s) shown as 5 characters of Steam's alphabet.
        case steam
    }

    public var kind: Kind
    public var secret: [UInt8]
    public var algorithm: HMAC.Algorithm
    public var digits: Int
    /// Seconds per code (TOTP and Steam).
    public var period: Int
    /// The next counter value (HOTP).
    public var counter: UInt64
    public var issuer: String
    public var account: String

    /// Longest `otp` value accepted: a URI is a few hundred bytes; this bounds hostile input.
    public static let maximumLength = 4096
    static let digitRange = 6...10
    static let periodRange = 1...86_400

    public init(
        kind: Kind = .totp, secret: [UInt8], algorithm: HMAC.Algorithm = .sha1, digits: Int = 6, period: Int = 30, counter: UInt64 = 0,
        issuer: String = "", account: String = ""
    ) {
        self.kind = kind
        self.secret = secret
        self.algorithm = algorithm
        self.digits = kind == .steam ? 5 : digits
        self.period = period
        self.counter = counter
        self.issuer = issuer
        self.account = account
    }

    /// Parses an `otp` value: an `otpauth://` or `steam://` URI, or a bare base32 secret (spaces,
    /// dashes, lower case and missing padding allowed, as authenticator apps print them).
    public init(parsing text: String) throws(OneTimeCodeError) {
        guard text.utf8.count <= Self.maximumLength else { throw .notAnOTPAuthURI("longer than \(Self.maximumLength) bytes") }
        let trimmed = text.trimmingWhitespace
        let lower = trimmed.lowercased()
        if lower.hasPrefix("steam://") {
            self.init(kind: .steam, secret: try Base32.decode(String(trimmed.dropFirst("steam://".count))))
        } else if lower.hasPrefix("otpauth://") {
            try self.init(uri: trimmed)
        } else if trimmed.contains("://") {
            throw .notAnOTPAuthURI("the scheme must be otpauth://")
        } else {
            self.init(secret: try Base32.decode(trimmed))
        }
    }

    /// What a record's `otp` stores for `text`: a URI as given (trimmed), a bare secret or a
    /// `steam://` URI as the Key Uri Format URI of its parameters, labelled `account`.
    public static func storedValue(of text: String, account: String = "") throws(OneTimeCodeError) -> String {
        var parameters = try OneTimeCodeParameters(parsing: text)
        let trimmed = text.trimmingWhitespace
        if trimmed.lowercased().hasPrefix("otpauth://") { return trimmed }
        parameters.account = account
        return parameters.uri
    }

    private init(uri: String) throws(OneTimeCodeError) {
        let rest = uri.dropFirst("otpauth://".count)
        let (location, query) = splitOnce(rest, "?")
        let (type, label) = splitOnce(location, "/")
        let kind: Kind
        switch type.lowercased() {
        case "totp": kind = .totp
        case "hotp": kind = .hotp
        case "steam": kind = .steam
        default: throw .notAnOTPAuthURI("type '\(type.prefix(16))' is neither totp nor hotp")
        }
        guard let decodedLabel = PercentEncoding.decode(label) else { throw .invalidParameter(name: "label", reason: "bad percent-encoding") }
        var parameters: [(name: String, value: String)] = []
        var pairs: [Substring] = []
        var remaining = query
        while !remaining.isEmpty {
            let (pair, after) = splitOnce(remaining, "&")
            if !pair.isEmpty { pairs.append(pair) }
            remaining = after
        }
        for pair in pairs {
            let (rawName, value) = splitOnce(pair, "=")
            let name = rawName.lowercased()
            guard let decoded = PercentEncoding.decode(value.contains("+") ? value.replacingPlus : String(value)) else {
                throw .invalidParameter(name: String(name.prefix(32)), reason: "bad percent-encoding")
            }
            guard !parameters.contains(where: { $0.name == name }) else {
                throw .invalidParameter(name: String(name.prefix(32)), reason: "given twice")
            }
            parameters.append((name, decoded))
        }
        func value(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
        guard let secretText = value("secret"), !secretText.isEmpty else { throw .invalidParameter(name: "secret", reason: "missing") }
        let isSteam = kind == .steam || value("encoder")?.lowercased() == "steam"
        var parsed = OneTimeCodeParameters(kind: isSteam ? .steam : kind, secret: try Base32.decode(secretText))
        if let algorithm = value("algorithm") {
            guard let known = HMAC.Algorithm(rawValue: algorithm.uppercased()) else {
                throw .invalidParameter(name: "algorithm", reason: "must be SHA1, SHA256 or SHA512")
            }
            parsed.algorithm = known
        }
        if let digits = value("digits"), !isSteam {
            guard let number = Int(digits), Self.digitRange.contains(number) else {
                throw .invalidParameter(name: "digits", reason: "must be 6 to 10")
            }
            parsed.digits = number
        }
        if let period = value("period") {
            guard let number = Int(period), Self.periodRange.contains(number) else {
                throw .invalidParameter(name: "period", reason: "must be 1 to 86400 seconds")
            }
            parsed.period = number
        }
        if let counter = value("counter") {
            guard let number = UInt64(counter), number < UInt64(Int64.max) else {
                throw .invalidParameter(name: "counter", reason: "must be a whole number below 2^63")
            }
            parsed.counter = number
        }
        let (labelIssuer, account) = decodedLabel.contains(":") ? splitOnce(decodedLabel, ":") : ("", Substring(decodedLabel))
        parsed.issuer = value("issuer") ?? String(labelIssuer)
        parsed.account = String(account).trimmingWhitespace
        self = parsed
    }

    /// The Key Uri Format spelling, as `otp` stores it: parameters at their defaults are left out.
    public var uri: String {
        let label = (issuer.isEmpty ? "" : PercentEncoding.encode(issuer) + ":") + PercentEncoding.encode(account)
        var query = ["secret=" + Base32.encode(secret)]
        if !issuer.isEmpty { query.append("issuer=" + PercentEncoding.encode(issuer)) }
        if algorithm != .sha1 && kind != .steam { query.append("algorithm=" + algorithm.rawValue) }
        if digits != 6 && kind != .steam { query.append("digits=\(digits)") }
        if period != 30 && kind != .hotp { query.append("period=\(period)") }
        if kind == .hotp { query.append("counter=\(counter)") }
        return "otpauth://\(kind.rawValue)/\(label)?\(query.joined(separator: "&"))"
    }

    /// The same parameters with the counter moved on (HOTP), for writing back after a code.
    public func advanced() -> OneTimeCodeParameters {
        var next = self
        next.counter += 1
        return next
    }
}

/// The text before and after the first `separator` (all of it and nothing when there is none).
/// Searched as UTF-8 bytes: the separators are ASCII, and Character indexing (grapheme breaking)
/// was most of an import's time parsing one-time-code URIs.
private func splitOnce<S: StringProtocol>(_ text: S, _ separator: Unicode.Scalar) -> (Substring, Substring) {
    let whole = Substring(text)
    guard let index = whole.utf8.firstIndex(of: UInt8(separator.value)) else { return (whole, "") }
    return (whole[..<index], whole[whole.utf8.index(after: index)...])
}

extension StringProtocol {
    /// `+` is a space in a query (HTML forms); authenticator exports use either spelling.
    fileprivate var replacingPlus: String { String(self).split(separator: "+", omittingEmptySubsequences: false).joined(separator: " ") }
}
