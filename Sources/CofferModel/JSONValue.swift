import CofferSupport
/// A JSON value as the model holds it: a record keeps the members it does not know (written by a
/// newer version) as they came, so nothing is lost on a rewrite. Reading and writing the
/// bytes is the format's (`JSONValue.parse`, `canonicalBytes`).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, checked against RFC 8259's grammar; see `uint64Value`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 64

    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    public var objectValue: JSONObject? { if case .object(let value) = self { value } else { nil } }

    /// A number written as an integer (no fraction, no exponent) that fits in `UInt64`.
    public var uint64Value: UInt64? { if case .number(let text) = self { UInt64(text) } else { nil } }
    /// Byte order of the UTF-8 spellings (code-point order): how an object's members are kept,
    /// and the canonical encoding's order.
    package static func precedesInUTF8(_ first: String, _ second: String) -> Bool {
        var (first, second) = (first, second)
        return first.withUTF8 { a in second.withUTF8 { b in UnsafeRawBufferPointer(a).lexicographicOrder(UnsafeRawBufferPointer(b)) < 0 } }
    }

    /// A number written as an integer (no fraction, no exponent) that fits in `Int64`.
    public var int64Value: Int64? { if case .number(let text) = self { Int64(text) } else { nil } }
}

// MARK: - Literals

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral members: (String, JSONValue)...) {
        var object = JSONObject()
        for (name, value) in members { object[name] = value }
        self = .object(object)
    }

    /// A finite number in Swift's shortest round-tripping spelling; `null` otherwise.
    public static func double(_ value: Double) -> JSONValue { value.isFinite ? .number(String(value)) : .null }
}
