import CofferSupport
import CofferModel

/// The JSON reader and canonical writer (SPEC.md §6.2, §7.5) for `JSONValue`, by hand.
///
/// Why not Foundation's coders: a cold `coffer fill` spent more instructions in JSONDecoder's
/// runtime generic instantiation and protocol-conformance lookups than in decryption and file
/// I/O together (callgrind: 1.4 M of 3.9 M), and JSONEncoder was a fifth of an import. The
/// reader is also stricter than Foundation's where strictness protects the format: duplicate
/// member names, invalid UTF-8 and lone surrogates are errors, not a silent choice.
/// Where and why a document is not JSON. Never quotes the input: it may hold a secret.
public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

// MARK: - Reading

extension JSONValue {
    /// Parses one complete document (white space around it allowed, nothing else).
    public static func parse<Bytes: ContiguousBytesCollection>(_ bytes: Bytes) throws(JSONSyntaxError) -> JSONValue {
        let result: Result<JSONValue, JSONSyntaxError> = bytes.withContiguousBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            do throws(JSONSyntaxError) { return .success(try parser.document()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        skipWhiteSpace()
        let value = try value()
        skipWhiteSpace()
        guard index == bytes.count else { throw failure("data after the document") }
        return value
    }

    private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func failure(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, reason: reason) }

    private mutating func skipWhiteSpace() {
        while let byte = next, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        switch next {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case .some(UInt8(ascii: "-")), .some(UInt8(ascii: "0")...UInt8(ascii: "9")): return .number(try number())
        case nil: throw failure("unexpected end")
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count,
              (0..<count).allSatisfy({ bytes[index + $0] == word.utf8Start[$0] })
        else { throw failure("unexpected character") }
        index += count
    }

    private mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= JSONValue.maximumDepth else { throw failure("nested too deeply") }
        index += 1
        skipWhiteSpace()
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        var members: [(member: JSONObject.Member, offset: Int)] = []
        if next == UInt8(ascii: "}") { index += 1; depth -= 1; return .object(JSONObject()) }
        while true {
            guard next == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let nameOffset = index
            let name = try string()
            skipWhiteSpace()
            guard next == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhiteSpace()
            members.append(((name, try value()), nameOffset))
            skipWhiteSpace()
            switch next {
            case UInt8(ascii: ","): index += 1; skipWhiteSpace()
            case UInt8(ascii: "}"): index += 1; depth -= 1; return .object(try canonicalObject(members))
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    /// Sorts members into canonical order; two names with the same bytes are an error, reported
    /// at the later one.
    private func canonicalObject(_ members: [(member: JSONObject.Member, offset: Int)]) throws(JSONSyntaxError) -> JSONObject {
        let sorted = members.sorted {
            $0.member.name.hasSameUTF8(as: $1.member.name)
                ? $0.offset < $1.offset : JSONValue.precedesInUTF8($0.member.name, $1.member.name)
        }
        for position in sorted.indices.dropFirst() where sorted[position - 1].member.name.hasSameUTF8(as: sorted[position].member.name) {
            throw JSONSyntaxError(offset: sorted[position].offset, reason: "duplicate member name")
        }
        return JSONObject(sortedUniqueMembers: sorted.map(\.member))
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        var elements: [JSONValue] = []
        if next == UInt8(ascii: "]") { index += 1; depth -= 1; return .array(elements) }
        while true {
            elements.append(try value())
            skipWhiteSpace()
            switch next {
            case UInt8(ascii: ","): index += 1; skipWhiteSpace()
            case UInt8(ascii: "]"): index += 1; depth -= 1; return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// A string without escapes is validated in place; one with escapes is assembled in a buffer.
    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        var runStart = index
        var assembled: [UInt8]?
        while let byte = next {
            switch byte {
            case UInt8(ascii: "\""):
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<index])
                let text: String?
                if var buffer = assembled {
                    buffer.append(contentsOf: run)
                    text = String(strictUTF8: buffer[...])
                } else {
                    text = String(strictUTF8: run)
                }
                guard let text else { throw JSONSyntaxError(offset: runStart, reason: "invalid UTF-8 in a string") }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                assembled = (assembled ?? []) + UnsafeBufferPointer(rebasing: bytes[runStart..<index])
                index += 1
                try escape(into: &assembled!)
                runStart = index
            case 0..<0x20:
                throw failure("control character in a string")
            default:
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    private mutating func escape(into buffer: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = next else { throw failure("unterminated string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var value = try hexQuad()
            if (0xD800..<0xDC00).contains(value) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure("lone surrogate")
                }
                index += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("lone surrogate") }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(value) {
                throw failure("lone surrogate")
            }
            buffer.append(contentsOf: UTF8.encode(Unicode.Scalar(value)!)!)
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit: UInt32
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(bytes[index] - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(bytes[index] - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(bytes[index] - UInt8(ascii: "A") + 10)
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if next == UInt8(ascii: "-") { index += 1 }
        if next == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { throw failure("invalid number") }
        }
        if next == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("invalid number") }
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            index += 1
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("invalid number") }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func digits() -> Int {
        let start = index
        while let byte = next, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }
}

// MARK: - Writing

extension JSONValue {
    /// The canonical encoding (SPEC.md §6.2): members sorted by the bytes of their UTF-8 names,
    /// no insignificant white space, `/` and non-ASCII unescaped; `"`, `\` and control
    /// characters escaped as `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx` (lowercase).
    /// The same bytes as Python's `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
    public var canonicalBytes: [UInt8] {
        var output: [UInt8] = []
        write(to: &output)
        return output
    }

    public var canonicalText: String { String(decoding: canonicalBytes, as: UTF8.self) }

    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(member.name, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: $0, to: &output) }
    }

    /// A string given as UTF-8 bytes, as `writeString` writes it: what a listing streams row by
    /// row without making a `String` or a `JSONValue` of each field.
    public static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Runs that need no escape (nearly everything) are copied whole.
        var runStart = 0
        for (position, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
            appendEscape(byte, to: &output)
            runStart = position + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        output.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0..<0x20:
            output.append(contentsOf: "\\u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        default: output.append(byte)
        }
    }
}
