import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferHostKit
@testable import CofferFillAgent
import Foundation
import XCTest

/// The provider's desktop prompt, against a scripted pinentry that speaks Assuan
/// (Tests/Helpers/scripted-pinentry) and against programs that do not.
final class PinentryTests: XCTestCase {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Helpers/scripted-pinentry").standardized.path
    var answers = ""
    var log = ""

    override func setUp() {
        let base = Fixture.containerPath("pinentry")
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        answers = base + "/answers"
        log = base + "/log"
    }

    func pinentry(_ lines: [String], program: String? = nil) throws -> PinentryInteraction {
        try lines.joined(separator: "\n").write(toFile: answers, atomically: true, encoding: .utf8)
        let environment: Environment = ["PATH": "/usr/bin:/bin", "SCRIPTED_PINENTRY_ANSWERS": answers, "SCRIPTED_PINENTRY_LOG": log]
        return PinentryInteraction(program: program ?? Self.script, environment: environment)
    }

    func secret(_ bytes: SecureBytes?) -> String? {
        bytes.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }

    func testThePINComesBackExactlyAndCancelIsNil() throws {
        let interaction = try pinentry(["p%ss wörd 100%", "CANCEL"])
        XCTAssertEqual(secret(try interaction.requestMasterPassword(attempt: 1, reason: "to fill alice on example.com")), "p%ss wörd 100%")
        XCTAssertNil(try interaction.requestMasterPassword(attempt: 2, reason: "again"))
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC Coffer needs your master password to fill alice on example.com."), transcript)
        XCTAssertTrue(transcript.contains("SETERROR Wrong master password (attempt 2)"), "a retry says why")
        XCTAssertFalse(transcript.contains("p%ss"), "the PIN is never echoed back to pinentry")
        XCTAssertFalse(interaction.canChooseIdentity)
    }

    func testTheProviderUnlocksThroughPinentryAndCancelReleasesNothing() throws {
        let owner = try Fixture.vault()
        let record = try owner.add(Fixture.draft("example.com", user: "alice", password: "S3cret"))
        let identity = PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: "example.com", type: .domain), user: "alice", recordIdentifier: record.id.hex)

        let wrongThenRight = CredentialProvider(vault: try Fixture.open(owner), interaction: try pinentry(["wrong", Fixture.password]), sessions: nil)
        wrongThenRight.prepareInterfaceToProvideCredential(for: identity)
        XCTAssertEqual(wrongThenRight.extensionContext.outcome, .completed(PasswordCredential(user: "alice", password: "S3cret")))

        let cancelled = CredentialProvider(vault: try Fixture.open(owner), interaction: try pinentry(["CANCEL"]), sessions: nil)
        cancelled.prepareInterfaceToProvideCredential(for: identity)
        XCTAssertEqual(cancelled.extensionContext.outcome, .cancelled(ExtensionError(.userCanceled)))
    }

    func testAMissingOrForeignProgramIsAClearFailure() throws {
        XCTAssertThrows(try pinentry([], program: "/nonexistent/pinentry").requestMasterPassword(attempt: 1, reason: "x")) {
            if case AssuanError.unavailable = $0 { return true }
            return false
        }
        // A program that is not a pinentry: it answers with something that is not Assuan.
        XCTAssertThrows(try pinentry([], program: "/usr/bin/yes").requestMasterPassword(attempt: 1, reason: "x")) {
            if case AssuanError.malformed = $0 { return true }
            return false
        }
    }

    func testAssuanCodec() throws {
        XCTAssertEqual(Assuan.command("SETDESC", "50% off\nnow"), Array("SETDESC 50%25 off%0Anow".utf8))
        XCTAssertEqual(try Assuan.parse(Array("D a%25b%0Ac".utf8)[...]), .data(Array("a%b\nc".utf8)))
        XCTAssertEqual(try Assuan.parse(Array("OK Pleased to meet you".utf8)[...]), .ok)
        XCTAssertEqual(try Assuan.parse(Array("ERR 83886179 Operation cancelled".utf8)[...]), .error(code: 83_886_179, message: "Operation cancelled"))
        XCTAssertEqual(try Assuan.parse(Array("S PASSWORD_FROM_CACHE".utf8)[...]), .other)
        for bad in ["D a%2", "D %zz", "ERR nope", "HELLO"] {
            XCTAssertThrows(try Assuan.parse(Array(bad.utf8)[...]), bad) { $0 is AssuanError }
        }
        XCTAssertThrows(try Assuan.parse(Array(repeating: UInt8(ascii: "D"), count: 1001)[...])) { $0 is AssuanError }
    }
}
