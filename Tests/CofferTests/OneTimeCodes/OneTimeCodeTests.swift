import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// One-time codes against the RFCs' own vectors, against `oathtool` (Debian's, run here), and the
/// code paths against each other: liboath for 6–8 digits, `HMAC` for 9–10 digits and Steam.
final class OneTimeCodeTests: XCTestCase {
    let sha1Seed = Array("12345678901234567890".utf8)
    let sha256Seed = Array("12345678901234567890123456789012".utf8)
    let sha512Seed = Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)

    /// RFC 6238 Appendix B: 8 digits, 30 s, the three hashes.
    func testRFC6238AppendixB() throws {
        let table: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, sha1, sha256, sha512) in table {
            let date = Date(timeIntervalSince1970: TimeInterval(time))
            for (seed, algorithm, expected) in [(sha1Seed, HMAC.Algorithm.sha1, sha1), (sha256Seed, .sha256, sha256), (sha512Seed, .sha512, sha512)] {
                let parameters = OneTimeCodeParameters(secret: seed, algorithm: algorithm, digits: 8)
                XCTAssertEqual(try parameters.code(at: date).code, expected, "\(algorithm) at \(time)")
            }
        }
    }

    /// RFC 4226 Appendix D: HOTP values and the 31-bit truncated values, which are the 10-digit
    /// codes (and, mod 10^9, the 9-digit ones) that liboath cannot make.
    func testRFC4226AppendixD() throws {
        let truncated: [UInt32] = [1_284_755_224, 1_094_287_082, 137_359_152, 1_726_969_429, 1_640_338_314,
                                   868_254_676, 1_918_287_922, 82_162_583, 673_399_871, 645_520_489]
        let hotp = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for counter in 0..<10 {
            let six = OneTimeCodeParameters(kind: .hotp, secret: sha1Seed, counter: UInt64(counter))
            XCTAssertEqual(try six.hotpCode().code, hotp[counter], "liboath, counter \(counter)")
            XCTAssertEqual(try six.truncatedValue(movingFactor: UInt64(counter)), truncated[counter], "HMAC path, counter \(counter)")
            var ten = six
            ten.digits = 10
            XCTAssertEqual(try ten.hotpCode().code, String(format: "%010u", truncated[counter]))
            ten.digits = 9
            XCTAssertEqual(try ten.hotpCode().code, String(format: "%09u", truncated[counter] % 1_000_000_000))
        }
    }

    /// Wherever liboath answers (6–8 digits), the `HMAC` path gives the same code: the path used
    /// for 9–10 digits and Steam is checked against the library for every hash.
    func testTheHMACPathAgreesWithLiboath() throws {
        for (seed, algorithm) in [(sha1Seed, HMAC.Algorithm.sha1), (sha256Seed, .sha256), (sha512Seed, .sha512)] {
            for digits in 6...8 {
                for step in [UInt64(0), 1, 37_037_036, 666_666_666, UInt64.random(in: 0..<UInt64(Int32.max))] {
                    let parameters = OneTimeCodeParameters(secret: seed, algorithm: algorithm, digits: digits)
                    var modulus: UInt32 = 1
                    for _ in 0..<digits { modulus *= 10 }
                    let fromHMAC = try parameters.truncatedValue(movingFactor: step) % modulus
                    XCTAssertEqual(try parameters.value(movingFactor: step), String(format: "%0\(digits)u", fromHMAC), "\(algorithm) \(digits) \(step)")
                }
            }
        }
        // A key longer than the hash's block is hashed first (RFC 2104 §2).
        let longKey = [UInt8](repeating: 0xAB, count: 200)
        let parameters = OneTimeCodeParameters(secret: longKey, digits: 8)
        XCTAssertEqual(try parameters.value(movingFactor: 5), String(format: "%08u", try parameters.truncatedValue(movingFactor: 5) % 100_000_000))
    }

    /// Debian's `oathtool` at fixed times, for TOTP of every hash and digit count it knows, and HOTP.
    func testCodesEqualOathtool() throws {
        let secret = "JBSWY3DPEHPK3PXP"
        for time in [Int64(0), 1_700_000_000, 1_700_000_029, 2_000_000_000] {
            for (algorithm, name) in [(HMAC.Algorithm.sha1, "sha1"), (.sha256, "sha256"), (.sha512, "sha512")] {
                for digits in [6, 8] {
                    let parameters = try OneTimeCodeParameters(parsing: "otpauth://totp/x?secret=\(secret)&algorithm=\(algorithm.rawValue)&digits=\(digits)")
                    let expected = try oathtool(["--totp=\(name)", "--base32", "--digits=\(digits)", "--now=@\(time)", "-"], key: secret)
                    XCTAssertEqual(try parameters.code(at: Date(timeIntervalSince1970: TimeInterval(time))).code, expected, "\(name) \(digits) @\(time)")
                }
            }
            let period60 = try OneTimeCodeParameters(parsing: "otpauth://totp/x?secret=\(secret)&period=60")
            XCTAssertEqual(try period60.code(at: Date(timeIntervalSince1970: TimeInterval(time))).code,
                           try oathtool(["--totp", "--base32", "--time-step-size=60s", "--now=@\(time)", "-"], key: secret))
        }
        for counter in [0, 1, 99, 123_456] {
            let parameters = try OneTimeCodeParameters(parsing: "otpauth://hotp/x?secret=\(secret)&counter=\(counter)")
            XCTAssertEqual(try parameters.hotpCode().code, try oathtool(["--hotp", "--base32", "--counter=\(counter)", "-"], key: secret))
        }
    }

    /// Steam Guard: values from Python's `hmac` (an independent implementation):
    /// `hmac.new(b32decode("JBSWY3DPEHPK3PXP"), pack(">Q", t // 30), sha1)`, truncated, base 26.
    func testSteamGuardCodes() throws {
        for form in ["steam://JBSWY3DPEHPK3PXP", "otpauth://totp/Steam:me?secret=JBSWY3DPEHPK3PXP&issuer=Steam&encoder=steam",
                     "otpauth://steam/Steam:me?secret=JBSWY3DPEHPK3PXP"] {
            let parameters = try OneTimeCodeParameters(parsing: form)
            XCTAssertEqual(parameters.kind, .steam, form)
            for (time, code) in [(0.0, "VH8YJ"), (1_700_000_000, "2KM2P"), (2_000_000_000, "HNCVQ")] {
                XCTAssertEqual(try parameters.code(at: Date(timeIntervalSince1970: time)).code, code, "\(form) @\(time)")
            }
        }
    }

    func testURIsParseAndPrintInTheKeyUriFormat() throws {
        let parsed = try OneTimeCodeParameters(parsing: "otpauth://totp/ACME%20Co:john.doe@email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ&issuer=ACME%20Co&algorithm=SHA256&digits=7&period=45")
        XCTAssertEqual(parsed.issuer, "ACME Co")
        XCTAssertEqual(parsed.account, "john.doe@email.com")
        XCTAssertEqual(parsed.algorithm, .sha256)
        XCTAssertEqual(parsed.digits, 7)
        XCTAssertEqual(parsed.period, 45)
        XCTAssertEqual(try OneTimeCodeParameters(parsing: parsed.uri), parsed, "the printed URI reads back the same")
        let bare = try OneTimeCodeParameters(parsing: " jbsw y3dp-ehpk 3pxp ")
        XCTAssertEqual(bare.secret, Array("Hello!\u{DE}\u{AD}\u{BE}\u{EF}".unicodeScalars.map { UInt8($0.value) }))
        XCTAssertTrue(bare.kind == .totp && bare.digits == 6 && bare.period == 30)
        XCTAssertEqual(try OneTimeCodeParameters(parsing: "JBSWY3DPEHPK3PXP").secret, try OneTimeCodeParameters(parsing: "JBSWY3DPEHPK3PXP").secret)
        let hotp = try OneTimeCodeParameters(parsing: "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=41")
        XCTAssertEqual(hotp.advanced().counter, 42)
        XCTAssertTrue(hotp.advanced().uri.contains("counter=42"))
    }

    /// Bad input gets an error naming the part, never the secret.
    func testMalformedInputIsRefusedWithoutEchoingTheSecret() throws {
        let cases: [(String, String)] = [
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=99", "digits"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=5", "digits"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=0", "period"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=-30", "period"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=MD5", "algorithm"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&secret=JBSWY3DPEHPK3PXP", "twice"),
            ("otpauth://totp/x?issuer=a", "secret"),
            ("otpauth://totp/x?secret=", "secret"),
            ("otpauth://yotp/x?secret=JBSWY3DPEHPK3PXP", "type"),
            ("otpauth://totp/%zz?secret=JBSWY3DPEHPK3PXP", "label"),
            ("https://example.com/?secret=JBSWY3DPEHPK3PXP", "scheme"),
            ("JBSWY3DPEHPK3PX1", "base32"),
            ("JBSWY3D=PEHPK3PXP", "padding"),
            ("JBSWY3DPEHPK3PXP=", "padding"),
            ("A", "length"),
            ("", "empty"),
            (String(repeating: "A", count: 10 << 20), "longer"),
        ]
        for (text, word) in cases {
            XCTAssertThrows(try OneTimeCodeParameters(parsing: text), "\(text.prefix(60))") { error in
                let message = "\(error)"
                return message.contains(word) && !message.contains("JBSWY3DPEHPK3PXP")
            }
        }
    }

    func testHMACSHA1MatchesRFC2202() throws {
        XCTAssertEqual(Hex.encode(try HMAC.authenticate(Array("Hi There".utf8), key: [UInt8](repeating: 0x0B, count: 20), algorithm: .sha1)),
                       "b617318655057264e28bc0b6fb378c8ef146be00")
        XCTAssertEqual(Hex.encode(try HMAC.authenticate(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8), algorithm: .sha1)),
                       "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        XCTAssertEqual(Hex.encode(SHA1.hash(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(Hex.encode(SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    /// Runs Debian's oathtool with the key on stdin (never on argv, even a test's).
    private func oathtool(_ arguments: [String], key: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/oathtool")
        process.arguments = arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data((key + "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "oathtool \(arguments)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
