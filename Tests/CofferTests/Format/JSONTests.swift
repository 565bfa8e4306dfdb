import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class JSONTests: XCTestCase {
    /// The reference writer (Python's json.dumps) and ours agree byte for byte, and a spaced,
    /// fully escaped spelling of the same document reads back to the same value.
    func testCanonicalWriterMatchesTheReferenceVector() throws {
        let vector = try VectorFile.load("primitives/json_canonical.vector")
        let spaced = try JSONValue.parse(vector.hex("input"))
        XCTAssertEqual(spaced.canonicalBytes, vector.hex("canonical"))
        XCTAssertEqual(try JSONValue.parse(vector.hex("canonical")), spaced)
    }

    func testValuesAndEscapesAreRead() throws {
        let value = try JSONValue.parse(#" {"a":[1,-0,2.5e-3,true,false,null],"s":"\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t"} "#)
        XCTAssertEqual(value.objectValue?["a"], [1, .number("-0"), .number("2.5e-3"), true, false, .null])
        XCTAssertEqual(value.objectValue?["s"]?.stringValue, "é😀/\"\\\u{8}\u{c}\n\r\t")
    }

    /// Names are compared byte for byte (RFC 8259, Python): "é" precomposed and decomposed are
    /// two members, kept in UTF-8 byte order, and the duplicate is reported at the later name.
    func testMemberNamesAreComparedByTheirBytes() throws {
        let document = #"{"e\u0301":1,"\u00e9":2,"b":3}"#
        let object = try XCTUnwrap(try JSONValue.parse(document).objectValue)
        XCTAssertEqual(object.names.map { Array($0.utf8) }, [[0x62], [0x65, 0xCC, 0x81], [0xC3, 0xA9]])
        XCTAssertEqual(object["\u{e9}"], 2)
        XCTAssertEqual(object["e\u{301}"], 1)
        XCTAssertEqual(JSONValue.object(object).canonicalText, "{\"b\":3,\"e\u{301}\":1,\"\u{e9}\":2}")
        XCTAssertThrows(try JSONValue.parse(#"{"b":1,"a":2,"b":3}"#)) { ($0 as? JSONSyntaxError)?.offset == 13 }

        var edited = object
        edited["a"] = JSONValue.null
        edited["b"] = nil
        edited["zz"] = nil
        XCTAssertEqual(edited.names, ["a", "e\u{301}", "\u{e9}"])
        XCTAssertEqual(JSONObject(["b": 1, "a": 2]), ["a": 2, "b": 1])
        XCTAssertNotEqual(JSONObject(["a": 1]), ["a": 2])
    }

    func testIntegersAreExactAndBounded() throws {
        XCTAssertEqual(try JSONValue.parse("18446744073709551615").uint64Value, UInt64.max)
        XCTAssertNil(try JSONValue.parse("18446744073709551616").uint64Value)
        XCTAssertNil(try JSONValue.parse("1.0").uint64Value)
        XCTAssertNil(try JSONValue.parse("1e2").uint64Value)
        XCTAssertNil(try JSONValue.parse("-1").uint64Value)
        XCTAssertEqual(try JSONValue.parse("-9223372036854775808").int64Value, Int64.min)
    }

    /// Each of these is not JSON (RFC 8259), or is JSON a reader must not guess about.
    func testInvalidDocumentsAreRejectedWithAnOffsetAndNoContent() {
        let cases: [(String, String)] = [
            ("", "unexpected end"),
            ("{\"a\":1,}", "expected a member name"),
            ("[1,]", "unexpected character"),
            ("{\"a\":1}x", "data after the document"),
            ("{\"a\":1,\"a\":2}", "duplicate member name"),
            ("\"\\ud800\"", "lone surrogate"),
            ("\"\\udc00\"", "lone surrogate"),
            ("\"\\ud800\\u0041\"", "lone surrogate"),
            ("\"\\x\"", "invalid escape"),
            ("\"\\u12g4\"", "invalid \\u escape"),
            ("\"a\u{1}b\"", "control character in a string"),
            ("\"open", "unterminated string"),
            ("01", "data after the document"),
            ("-", "invalid number"),
            ("1.", "invalid number"),
            ("1e", "invalid number"),
            ("+1", "unexpected character"),
            ("NaN", "unexpected character"),
            ("tru", "unexpected character"),
            ("'a'", "unexpected character"),
        ]
        for (text, reason) in cases {
            XCTAssertThrows(try JSONValue.parse(text), text) { ($0 as? JSONSyntaxError)?.reason == reason }
        }
    }

    func testInvalidUTF8IsRejected() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22]] {
            XCTAssertThrows(try JSONValue.parse(bytes), "\(bytes)") { ($0 as? JSONSyntaxError)?.reason == "invalid UTF-8 in a string" }
        }
    }

    func testNestingIsBounded() throws {
        let deepest = String(repeating: "[", count: JSONValue.maximumDepth) + String(repeating: "]", count: JSONValue.maximumDepth)
        XCTAssertNoThrow(try JSONValue.parse(deepest))
        let tooDeep = String(repeating: "[", count: 100_000)
        XCTAssertThrows(try JSONValue.parse(tooDeep)) { ($0 as? JSONSyntaxError)?.reason == "nested too deeply" }
    }

    func testErrorsNeverQuoteTheInput() {
        XCTAssertThrows(try JSONValue.parse(#"{"password":"hunter2" "#)) { error in
            !String(describing: error).contains("hunter2") && !String(describing: error).contains("password")
        }
    }

    func testWriterRoundTripsEveryScalarClass() throws {
        var text = ""
        for value in [0, 1, 0x1F, 0x20, 0x22, 0x2F, 0x5C, 0x7F, 0xE9, 0x2028, 0xFFFD, 0x1F600] {
            text.unicodeScalars.append(Unicode.Scalar(UInt32(value))!)
        }
        let value: JSONValue = ["k": .string(text), "n": .integer(UInt64.max)]
        XCTAssertEqual(try JSONValue.parse(value.canonicalBytes), value)
    }
}
