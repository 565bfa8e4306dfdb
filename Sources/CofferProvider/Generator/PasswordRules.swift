import CofferStore
import CofferFormat
/// A site's password requirements in Apple's Password Rules language (SPEC.md §12.1): what
/// Safari reads from a field's `passwordrules` attribute, iOS apps set as
/// `UITextInputPasswordRules`, and Apple's Password Manager Resources publishes per site.
///
///     minlength: 8; maxlength: 16; required: lower, upper; required: digit; allowed: [-_.]
///
/// Parsed by hand after the grammar of Apple's reference parser (`PasswordRulesParser.js`),
/// then reduced to one canonical rule the way that parser does: the largest `minlength`, the
/// smallest `maxlength` and `max-consecutive`, every `required` kept, `allowed` the union of
/// every `allowed` and `required` (all printable ASCII when neither is given).
public struct PasswordRules: Equatable, Sendable, CustomStringConvertible {
    public var minimumLength: Int?
    public var maximumLength: Int?
    /// The most identical characters allowed in a row.
    public var maximumConsecutive: Int?
    /// Each set must contribute at least one character.
    public var required: [ASCIISet]
    /// Every character of a password comes from here (it contains every required set).
    public var allowed: ASCIISet

    public init(minimumLength: Int? = nil, maximumLength: Int? = nil, maximumConsecutive: Int? = nil, required: [ASCIISet] = [], allowed: ASCIISet? = nil) {
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.maximumConsecutive = maximumConsecutive
        self.required = required
        let union = required.reduce(allowed ?? ASCIISet()) { $0.union($1) }
        self.allowed = union.isEmpty ? .asciiPrintable : union
    }

    /// Parses `text`; a property with an empty value is ignored, anything else that is not
    /// the grammar (an unknown property, a bad number, an unknown class) is an error.
    public init(parsing text: String) throws(PasswordRulesError) {
        var parser = PasswordRulesParser(bytes: Array(text.utf8))
        let properties = try parser.properties()
        var minimum: Int?, maximum: Int?, consecutive: Int?
        var required: [ASCIISet] = [], allowed = ASCIISet()
        for property in properties {
            switch property {
            case .minimumLength(let value): minimum = max(minimum ?? 0, value)
            case .maximumLength(let value): maximum = min(maximum ?? .max, value)
            case .maximumConsecutive(let value): consecutive = min(consecutive ?? .max, value)
            case .required(let set): required.append(set)
            case .allowed(let set): allowed = allowed.union(set)
            }
        }
        self.init(minimumLength: minimum == 0 ? nil : minimum, maximumLength: maximum, maximumConsecutive: consecutive, required: required, allowed: allowed)
    }

    /// The canonical text: properties in a fixed order, each set written with the named
    /// classes it contains whole and one custom class for the rest.
    public var description: String {
        var parts: [String] = []
        if let minimumLength { parts.append("minlength: \(minimumLength)") }
        if let maximumLength { parts.append("maxlength: \(maximumLength)") }
        if let maximumConsecutive { parts.append("max-consecutive: \(maximumConsecutive)") }
        parts += required.map { "required: \($0.ruleText)" }
        parts.append("allowed: \(allowed.ruleText)")
        return parts.joined(separator: "; ")
    }

    /// Whether `password` satisfies the rule (a site's check, used by tests and `audit`).
    public func accepts(_ password: String) -> Bool {
        let bytes = Array(password.utf8)
        guard bytes.count >= (minimumLength ?? 0), bytes.count <= (maximumLength ?? .max) else { return false }
        guard bytes.allSatisfy(allowed.contains) else { return false }
        guard required.allSatisfy({ set in bytes.contains(where: set.contains) }) else { return false }
        if let maximumConsecutive {
            var run = 0
            for (index, byte) in bytes.enumerated() {
                run = index > 0 && bytes[index - 1] == byte ? run + 1 : 1
                if run > maximumConsecutive { return false }
            }
        }
        return true
    }
}

/// Where and why a rule is not the grammar, or cannot be met. Quotes no password.
public struct PasswordRulesError: Error, Equatable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// A set of ASCII characters (code points 0–127), as the language's classes are.
public struct ASCIISet: Equatable, Hashable, Sendable {
    public private(set) var bits: UInt128 = 0
    public init() {}
    public init(_ characters: some Sequence<UInt8>) { for byte in characters where byte < 128 { bits |= 1 << byte } }
    init(range: ClosedRange<UInt8>) { self.init(range) }

    public static let upper = ASCIISet(range: 0x41...0x5A)
    public static let lower = ASCIISet(range: 0x61...0x7A)
    public static let digit = ASCIISet(range: 0x30...0x39)
    /// Every printable ASCII character that is not a letter or digit, the space included.
    public static let special = ASCIISet(range: 0x20...0x2F).union(ASCIISet(range: 0x3A...0x40)).union(ASCIISet(range: 0x5B...0x60)).union(ASCIISet(range: 0x7B...0x7E))
    public static let asciiPrintable = ASCIISet(range: 0x20...0x7E)

    public var isEmpty: Bool { bits == 0 }
    public var count: Int { bits.nonzeroBitCount }
    public func contains(_ byte: UInt8) -> Bool { byte < 128 && bits & (1 << byte) != 0 }
    public func union(_ other: ASCIISet) -> ASCIISet { var result = self; result.bits |= other.bits; return result }
    public func intersection(_ other: ASCIISet) -> ASCIISet { var result = self; result.bits &= other.bits; return result }
    public func subtracting(_ other: ASCIISet) -> ASCIISet { var result = self; result.bits &= ~other.bits; return result }
    public func isSuperset(of other: ASCIISet) -> Bool { other.bits & ~bits == 0 }
    /// The members in code-point order.
    public var members: [UInt8] { (0..<128).map(UInt8.init).filter(contains) }

    /// The set in the language: `ascii-printable`, else the named classes it holds whole, then
    /// a custom class of the rest (`-` first, `]` last, written `]]`).
    var ruleText: String {
        if isSuperset(of: .asciiPrintable) { return "ascii-printable" }
        var names: [String] = [], rest = self
        for (name, set) in [("upper", ASCIISet.upper), ("lower", .lower), ("digit", .digit), ("special", .special)] where isSuperset(of: set) {
            names.append(name)
            rest = rest.subtracting(set)
        }
        if !rest.isEmpty {
            var characters = rest.members.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: "]") }
            if rest.contains(UInt8(ascii: "-")) { characters.insert(UInt8(ascii: "-"), at: 0) }
            if rest.contains(UInt8(ascii: "]")) { characters.append(UInt8(ascii: "]")) }
            names.append("[" + String(decoding: characters, as: UTF8.self) + "]")
        }
        return names.joined(separator: ", ")
    }
}

/// The grammar of SPEC.md §12.1, over the rule's UTF-8 bytes.
private struct PasswordRulesParser {
    enum Property { case minimumLength(Int), maximumLength(Int), maximumConsecutive(Int), required(ASCIISet), allowed(ASCIISet) }

    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func properties() throws(PasswordRulesError) -> [Property] {
        var found: [Property] = []
        skipWhitespace()
        while position < bytes.count {
            if let property = try property() { found.append(property) }
            skipWhitespace()
            guard position < bytes.count else { break }
            guard bytes[position] == UInt8(ascii: ";") else { throw error("expected ';'") }
            position += 1
            skipWhitespace()
        }
        return found
    }

    private mutating func property() throws(PasswordRulesError) -> Property? {
        let name = identifier()
        guard ["minlength", "maxlength", "max-consecutive", "required", "allowed"].contains(name) else {
            throw error(name.isEmpty ? "expected a property name" : "unknown property '\(name)'")
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':' after '\(name)'") }
        position += 1
        skipWhitespace()
        if position == bytes.count || bytes[position] == UInt8(ascii: ";") { return nil }  // an empty value says nothing
        switch name {
        case "minlength": return .minimumLength(try integer())
        case "maxlength": return .maximumLength(try integer())
        case "max-consecutive": return .maximumConsecutive(try integer())
        default:
            let set = try classes()
            if set.isEmpty { return nil }
            return name == "required" ? .required(set) : .allowed(set)
        }
    }

    private mutating func integer() throws(PasswordRulesError) -> Int {
        var value = 0, digits = 0
        while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 {
            value = min(value * 10 + Int(bytes[position] - 0x30), 1_000_000)
            digits += 1
            position += 1
        }
        guard digits > 0 else { throw error("expected a number") }
        return value
    }

    /// `class (',' class)*`, a class being a named class or `[…]`.
    private mutating func classes() throws(PasswordRulesError) -> ASCIISet {
        var set = ASCIISet()
        while true {
            guard position < bytes.count else { throw error("expected a character class") }
            if bytes[position] == UInt8(ascii: "[") {
                set = set.union(try customClass())
            } else {
                let name = identifier().lowercased()
                switch name {
                case "upper": set = set.union(.upper)
                case "lower": set = set.union(.lower)
                case "digit": set = set.union(.digit)
                case "special": set = set.union(.special)
                case "ascii-printable", "unicode": set = set.union(.asciiPrintable)
                default: throw error(name.isEmpty ? "expected a character class" : "unknown character class '\(name)'")
                }
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else { return set }
            position += 1
            skipWhitespace()
        }
    }

    /// `[` then printable ASCII up to the first `]` (or `]]`, which ends the class with `]` in
    /// it); a `-` is a member only as the first character; other bytes are ignored.
    private mutating func customClass() throws(PasswordRulesError) -> ASCIISet {
        position += 1
        var members: [UInt8] = []
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "]") {
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    members.append(byte)
                    position += 1
                }
                return ASCIISet(members)
            }
            guard byte >= 0x20, byte <= 0x7E else { continue }
            if byte == UInt8(ascii: "-"), position - 1 != start { continue }
            members.append(byte)
        }
        throw error("a character class is not closed with ']'")
    }

    private mutating func identifier() -> String {
        let start = position
        while position < bytes.count, bytes[position] == UInt8(ascii: "-") || (bytes[position] | 0x20 >= 0x61 && bytes[position] | 0x20 <= 0x7A) {
            position += 1
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0C, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private func error(_ reason: String) -> PasswordRulesError { PasswordRulesError(reason: "\(reason) at character \(position + 1)") }
}
