import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferAudit
import Foundation
import XCTest

/// Apple's Password Rules language (SPEC.md §12.1): the grammar, the canonical rule, the
/// generator's uniformity and entropy, and every rule Coffer ships, each checked by a checker
/// of this file's own on 1,000 generated passwords.
final class PasswordRulesTests: XCTestCase {
    static let quirks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../Data/web-quirks").standardized.path

    func set(_ characters: String) -> ASCIISet { ASCIISet(Array(characters.utf8)) }

    // MARK: The language

    func testDocumentedExamplesParse() throws {
        // Apple's examples ("Customizing Password AutoFill rules") and the data's own.
        let rules = try PasswordRules(parsing: "required: upper; required: lower; required: digit; max-consecutive: 2; minlength: 8;")
        XCTAssertEqual(rules.required, [.upper, .lower, .digit])
        XCTAssertEqual(rules.allowed, ASCIISet.upper.union(.lower).union(.digit), "without allowed, the required classes are what is allowed")
        XCTAssertEqual(rules.maximumConsecutive, 2)
        XCTAssertEqual(rules.minimumLength, 8)
        XCTAssertNil(rules.maximumLength)
        let amex = try PasswordRules(parsing: "minlength: 8; maxlength: 20; max-consecutive: 4; required: lower, upper; required: digit; allowed: [%&_?#=];")
        XCTAssertEqual(amex.required, [ASCIISet.lower.union(.upper), .digit], "one required property of two classes is one requirement")
        XCTAssertEqual(amex.allowed, ASCIISet.lower.union(.upper).union(.digit).union(set("%&_?#=")))
        XCTAssertEqual(try PasswordRules(parsing: "allowed: upper, lower"), try PasswordRules(parsing: "allowed: upper; allowed: lower"))
        XCTAssertEqual(try PasswordRules(parsing: "").allowed, .asciiPrintable, "no rule allows all printable ASCII")
        XCTAssertEqual(try PasswordRules(parsing: "required: unicode").allowed, .asciiPrintable, "unicode is generated as printable ASCII")
        XCTAssertEqual(try PasswordRules(parsing: "allowed: UPPER, Digit"), try PasswordRules(parsing: "allowed: upper, digit"), "class names ignore case")
    }

    func testDuplicatesTakeTheStrictest() throws {
        let rules = try PasswordRules(parsing: "minlength: 8; minlength: 12; maxlength: 30; maxlength: 20; max-consecutive: 3; max-consecutive: 2; required: digit; required: digit")
        XCTAssertEqual(rules.minimumLength, 12)
        XCTAssertEqual(rules.maximumLength, 20)
        XCTAssertEqual(rules.maximumConsecutive, 2)
        XCTAssertEqual(rules.required.count, 2, "each required property is its own requirement")
    }

    func testCustomClasses() throws {
        XCTAssertEqual(try PasswordRules(parsing: "allowed: [-abc]").allowed, set("-abc"), "a leading '-' is a member")
        XCTAssertEqual(try PasswordRules(parsing: "allowed: [a-c]").allowed, set("ac"), "a '-' elsewhere is ignored, not a range")
        XCTAssertEqual(try PasswordRules(parsing: "allowed: [ab]]").allowed, set("ab]"), "']]' ends the class with ']' in it")
        XCTAssertEqual(try PasswordRules(parsing: "allowed: [a[b]").allowed, set("a[b"))
        XCTAssertEqual(try PasswordRules(parsing: "allowed: [aé]").allowed, set("a"), "characters outside printable ASCII are ignored")
        XCTAssertEqual(try PasswordRules(parsing: "allowed: []; required: digit").allowed, .digit, "an empty class says nothing")
        XCTAssertEqual(try PasswordRules(parsing: "minlength: ; maxlength: 9").minimumLength, nil, "an empty value is ignored")
    }

    func testMalformedRulesAreErrors() {
        for text in ["foo: 3", "minlength 8", "minlength: eight", "allowed: upper,", "allowed: latin", "allowed: [abc", "minlength: 8 maxlength: 9", "; minlength: 8", "Minlength: 8"] {
            XCTAssertThrowsError(try PasswordRules(parsing: text), text)
        }
    }

    func testCanonicalTextRoundTrips() throws {
        for text in ["minlength: 8; maxlength: 20; max-consecutive: 4; required: lower, upper; required: digit; allowed: [%&_?#=];",
                     "required: [-]]; allowed: lower", "allowed: ascii-printable", "required: special; minlength: 6", "allowed: [ ab]"] {
            let rules = try PasswordRules(parsing: text)
            XCTAssertEqual(try PasswordRules(parsing: rules.description), rules, "\(text) → \(rules.description)")
        }
        XCTAssertEqual(try PasswordRules(parsing: "required: [-]]; allowed: lower").description, "required: [-]]; allowed: lower, [-]]")
    }

    /// The reference implementation's cases (Tools/reference/password_rules.py, from SPEC.md
    /// alone): canonical text or malformed, and the exact number of accepted passwords, whose
    /// log₂ the generator's entropy must be.
    func testReferenceVectors() throws {
        let file = try VectorFile.load("primitives/password_rules.vector")
        var cases = 0, index = 0
        while index < file.lines.count {
            XCTAssertEqual(file.lines[index].key, "rule")
            let text = file.lines[index].value.replacingOccurrences(of: "\\t", with: "\t")
            let canonical = file.lines[index + 1].value
            index += 2
            cases += 1
            guard canonical != "malformed" else {
                XCTAssertThrowsError(try PasswordRules(parsing: text), text)
                continue
            }
            let rules = try PasswordRules(parsing: text)
            XCTAssertEqual(rules.description, canonical, text)
            let length = try XCTUnwrap(Int(file.lines[index].value)), count = try XCTUnwrap(Double(file.lines[index + 1].value))
            index += 2
            let generator = try RuleGenerator(rules, length: length)
            XCTAssertEqual(generator.entropyBits, (log2(count) * 10).rounded(.down) / 10, text)
        }
        XCTAssertEqual(cases, 25)
    }

    // MARK: The generator

    func testContradictionsAreRefusedNotLooped() throws {
        for text in ["minlength: 9; maxlength: 3", "max-consecutive: 0", "maxlength: 2; required: upper; required: lower; required: digit",
                     "minlength: 4; maxlength: 4; max-consecutive: 1; allowed: [a]", "minlength: 300"] {
            XCTAssertThrowsError(try PasswordRules(parsing: text).generate(), text)
        }
        XCTAssertThrowsError(try PasswordRules(parsing: "minlength: 8; maxlength: 12").generate(length: 13), "a length outside the rule")
    }

    func testEntropyIsTheCountOfAcceptedPasswords() throws {
        func bits(_ text: String) throws -> Double { try PasswordRules(parsing: text).generate().entropyBits }
        XCTAssertEqual(try bits("minlength: 3; maxlength: 3; allowed: [ab]"), 3.0)
        XCTAssertEqual(try bits("minlength: 3; maxlength: 3; allowed: [ab]; max-consecutive: 1"), 1.0, "aba and bab")
        XCTAssertEqual(try bits("minlength: 3; maxlength: 3; required: [a]; allowed: [ab]"), 2.8, "7 of 8: floor(log2 7, 0.1)")
        // 36^12 − 26^12 passwords of 12 lower-case letters and digits with a digit.
        XCTAssertEqual(try bits("minlength: 12; maxlength: 12; required: digit; allowed: lower"), (log2(pow(36.0, 12) - pow(26.0, 12)) * 10).rounded(.down) / 10)
        XCTAssertEqual(try PasswordRules(parsing: "minlength: 8; maxlength: 30").generate().password.count, 20, "the preferred length inside the bounds")
        XCTAssertEqual(try PasswordRules(parsing: "minlength: 25").generate().password.count, 25)
        XCTAssertEqual(try PasswordRules(parsing: "maxlength: 12").generate().password.count, 12)
    }

    func testSpaceIsDrawnOnlyWhenRequired() throws {
        for _ in 0..<200 { XCTAssertFalse(try PasswordRules(parsing: "allowed: ascii-printable; minlength: 30").generate().password.contains(" ")) }
        XCTAssertTrue(try PasswordRules(parsing: "required: [ ]; allowed: lower").generate().password.contains(" "))
    }

    func testDrawsAreUniform() throws {
        // 3 characters of [abc], an 'a' required, no three alike: every accepted password enumerated.
        let rules = try PasswordRules(parsing: "minlength: 3; maxlength: 3; required: [a]; allowed: [abc]; max-consecutive: 2")
        let letters = Array("abc")
        let accepted = letters.flatMap { x in letters.flatMap { y in letters.map { z in String([x, y, z]) } } }
            .filter { $0.contains("a") && $0 != "aaa" }
        let generator = try RuleGenerator(rules)
        XCTAssertEqual(generator.entropyBits, (log2(Double(accepted.count)) * 10).rounded(.down) / 10)
        var counts: [String: Int] = [:]
        let draws = 18_000
        for _ in 0..<draws { counts[try generator.next(), default: 0] += 1 }
        XCTAssertEqual(Set(counts.keys), Set(accepted), "only and every accepted password is drawn")
        let expected = Double(draws) / Double(accepted.count)  // 1,000; a standard deviation is about 31
        for (password, count) in counts { XCTAssertEqual(Double(count), expected, accuracy: expected * 0.2, password) }
    }

    // MARK: The shipped data

    /// A site's check, written apart from the library's: length, allowed characters, each
    /// required set met, runs of one character no longer than allowed.
    func siteAccepts(_ password: String, _ rules: PasswordRules, length: ClosedRange<Int>) -> Bool {
        let bytes = Array(password.utf8)
        guard length.contains(bytes.count), bytes.allSatisfy({ rules.allowed.contains($0) && $0 != 0x20 || rules.required.contains { $0 == ASCIISet([0x20]) } }) else { return false }
        for set in rules.required where !bytes.contains(where: { set.contains($0) }) { return false }
        let longestRun = bytes.indices.reduce((longest: 0, run: 0)) { state, index in
            let run = index > 0 && bytes[index] == bytes[index - 1] ? state.run + 1 : 1
            return (max(state.longest, run), run)
        }.longest
        return longestRun <= (rules.maximumConsecutive ?? .max)
    }

    func testEveryShippedRuleGivesPasswordsItAccepts() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.quirks + "/password-rules.json"))
        guard case .object(let table) = try JSONValue.parse(Array(data)) else { return XCTFail("password-rules.json is not an object") }
        XCTAssertGreaterThan(table.count, 300)
        var checked = 0
        for (domain, entry) in table {
            let text = try XCTUnwrap(entry.objectValue?["password-rules"]?.stringValue, domain)
            let rules = try PasswordRules(parsing: text)
            let generator = try RuleGenerator(rules)
            let bounds = (rules.minimumLength ?? 1)...(rules.maximumLength ?? .max)
            for _ in 0..<200 {
                let password = try generator.next()
                guard siteAccepts(password, rules, length: bounds) else { return XCTFail("\(domain): '\(text)' gave a password it does not accept") }
            }
            checked += 1
        }
        XCTAssertEqual(checked, table.count)
    }

    func testQuirkLookupFollowsTheDataReadme() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quirks-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("""
            {"example.com": {"password-rules": "minlength: 9"},
             "a.example.org": {"password-rules": "minlength: 10", "exact-domain-match-only": true}}
            """.utf8).write(to: URL(fileURLWithPath: directory + "/password-rules.json"))
        let quirks = WebQuirks(directory: directory)
        XCTAssertEqual(try quirks.passwordRules(forHost: "example.com")?.domain, "example.com")
        XCTAssertEqual(try quirks.passwordRules(forHost: "login.www.example.com")?.domain, "example.com", "subdomains share the rule")
        XCTAssertNil(try quirks.passwordRules(forHost: "notexample.com"))
        XCTAssertEqual(try quirks.passwordRules(forHost: "a.example.org")?.rules, "minlength: 10")
        XCTAssertNil(try quirks.passwordRules(forHost: "b.a.example.org"), "exact-domain-match-only binds the host alone")
        XCTAssertNil(try quirks.passwordRules(forHost: "example.org"))
    }
}
