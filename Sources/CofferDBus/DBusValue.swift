/// A D-Bus value, typed as the wire types it travels as. The Secret Service speaks a small part of
/// the type system: strings, object paths, booleans, integers, byte arrays, arrays, dicts,
/// structs and variants.
public indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case string(String)
    case objectPath(String)
    case signature(String)
    case bytes([UInt8])
    /// An array whose elements have the signature `element` (given, so an empty array has a type).
    case array(element: String, [DBusValue])
    /// `a{kv}`: key and value signatures, then the entries in order.
    case dictionary(key: String, value: String, [(DBusValue, DBusValue)])
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)), (.signature(let a), .signature(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.array(let t, let a), .array(let u, let b)): t == u && a == b
        case (.dictionary(let k, let v, let a), .dictionary(let l, let w, let b)):
            k == l && v == w && a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }

    // MARK: Reading what a client sent

    public var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text): text
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    public var objectPathValue: String? {
        if case .objectPath(let path) = self { path } else if case .variant(let inner) = self { inner.objectPathValue } else { nil }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else if case .variant(let inner) = self { inner.boolValue } else { nil }
    }

    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let bytes): bytes
        case .array("y", let elements):
            elements.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
        case .variant(let inner): inner.bytesValue
        default: nil
        }
    }

    /// An `a{ss}` as a Swift dictionary; `nil` for another type or a name given twice.
    public var stringDictionary: [String: String]? {
        let value = if case .variant(let inner) = self { inner } else { self }
        guard case .dictionary("s", "s", let entries) = value else { return nil }
        var result: [String: String] = [:]
        for (key, value) in entries {
            guard let name = key.stringValue, let text = value.stringValue, result[name] == nil else { return nil }
            result[name] = text
        }
        return result
    }

    /// An `a{sv}` (properties) as a dictionary of variants' contents; `nil` for another type.
    public var properties: [String: DBusValue]? {
        guard case .dictionary("s", "v", let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for (key, value) in entries {
            guard let name = key.stringValue, case .variant(let inner) = value else { return nil }
            result[name] = inner
        }
        return result
    }

    public var objectPaths: [String]? {
        guard case .array("o", let elements) = self else { return nil }
        let paths = elements.compactMap(\.objectPathValue)
        return paths.count == elements.count ? paths : nil
    }

    // MARK: Building answers

    public static func strings(_ dictionary: [String: String]) -> DBusValue {
        .dictionary(key: "s", value: "s", dictionary.sorted { $0.key < $1.key }.map { (.string($0.key), .string($0.value)) })
    }

    public static func paths(_ paths: [String]) -> DBusValue {
        .array(element: "o", paths.map(DBusValue.objectPath))
    }

    public static func variants(_ dictionary: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", dictionary.map { (.string($0.0), .variant($0.1)) })
    }
}
