import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// `coffer audit` finds the weak, reused, old, insecure and breached passwords of a test vault —
/// the breached one through HIBP's range protocol served on 127.0.0.1 — and prints none of them.
final class AuditTests: XCTestCase {
    func vault() throws -> CLIHarness {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("weak.example.com", "alice", password: "password")
        _ = cli.add("http://plain.example.com/login", "bob", password: "password")
        _ = cli.add("strong.example.com", "carol", password: "vq8#Lm2!xR9$zT4pWk7&")
        // An old one, as an import would bring it (created three years ago).
        let vault = try Vault.open(GroupContainer(path: cli.container), configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, stateDirectory: cli.environment["XDG_STATE_HOME"]! + "/coffer"))
        try vault.unlock(masterPassword: SecureBytes(copying: Array(CLIHarness.master.utf8)))
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "old.example.com")], user: "dave",
                                  password: "Kp9!vX2#mQ7$wL4&zR8*", created: Date(timeIntervalSinceNow: -3 * 365 * 86_400)))
        return cli
    }

    /// A new vault whose `coffer` reads the web's data as shipped (SPEC.md §12.1).
    func withShippedWebQuirks() -> CLIHarness {
        let cli = CLIHarness()
        cli.environment["COFFER_WEB_QUIRKS"] = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Data/web-quirks").standardized.path
        cli.initVault()
        return cli
    }

    func findings(_ result: RunResult) throws -> [(kind: String, title: String, detail: String)] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        return (object["findings"] as! [[String: Any]]).map { ($0["kind"] as! String, $0["title"] as! String, $0["detail"] as! String) }
    }

    func testWeakReusedOldAndInsecure() throws {
        let cli = try vault()
        let result = cli.run(["audit", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(result.code, 1, "findings: exit 1")
        let found = try findings(result)
        XCTAssertEqual(Set(found.filter { $0.kind == "weak" }.map(\.title)), ["weak.example.com", "http://plain.example.com/login"])
        XCTAssertEqual(Set(found.filter { $0.kind == "reused" }.map(\.title)), ["weak.example.com", "http://plain.example.com/login"])
        XCTAssertEqual(found.filter { $0.kind == "old" }.map(\.title), ["old.example.com"])
        XCTAssertEqual(found.filter { $0.kind == "insecure" }.map(\.title), ["http://plain.example.com/login"])
        XCTAssertFalse(result.stdout.contains("\"password\""), "no password in the report")
        XCTAssertFalse(cli.run(["audit", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.contains("Kp9!"))
    }

    /// Each finding names where its password is changed (SPEC.md §12.2): the page Apple's data
    /// publishes, else the site's well-known URL; logins of sites that share (or shared) one
    /// account are not reused with each other, but still with anyone else.
    func testChangePasswordPagesAndSharedAccounts() throws {
        let cli = withShippedWebQuirks()
        _ = cli.add("https://github.com/login", "gina", password: "password")
        _ = cli.add("alltrails.com", "ann", password: "Hx7!kq2#Vm9$Lw4&Tz")  // historical: alltrails.com ~ alltrails.io
        _ = cli.add("alltrails.io", "ann", password: "Hx7!kq2#Vm9$Lw4&Tz")
        _ = cli.add("airbnb.com", "abe", password: "Jr5@np8%Qs3^Xc6*Bd")  // today's: airbnb.com ~ airbnb.de
        _ = cli.add("airbnb.de", "abe", password: "Jr5@np8%Qs3^Xc6*Bd")
        _ = cli.add("trails.example.org", "ann", password: "Jr5@np8%Qs3^Xc6*Bd")
        let result = cli.run(["audit", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let found = (object["findings"] as! [[String: Any]]).map {
            (kind: $0["kind"] as! String, title: $0["title"] as! String, url: $0["changePasswordURL"] as? String)
        }
        XCTAssertEqual(found.first { $0.kind == "weak" }?.url, "https://github.com/settings/security", "the published page")
        let reused = found.filter { $0.kind == "reused" }
        XCTAssertFalse(reused.contains { $0.title.hasPrefix("alltrails") }, "sites that once shared one account: not reuse")
        XCTAssertEqual(Set(reused.map(\.title)), ["airbnb.com", "airbnb.de", "trails.example.org"], "still reused with an unrelated site")
        XCTAssertEqual(reused.first { $0.title == "trails.example.org" }?.url, "https://trails.example.org/.well-known/change-password")
        let text = cli.run(["audit", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertTrue(text.stdout.contains("change at https://github.com/settings/security"), text.stdout)
    }

    /// `list SITE` and `fill SITE` with a login saved for a site that shares its accounts
    /// (SPEC.md §8.1.1): listed last, marked; never filled without a choice.
    func testASharingSitesLoginIsListedNotFilled() throws {
        let cli = withShippedWebQuirks()
        _ = cli.add("airbnb.com", "abe", password: "Jr5@np8%Qs3^Xc6*Bd")
        let listed = cli.run(["list", "https://www.airbnb.co.uk/login", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["match"] as? String }, ["shared-credential"], listed.stdout)
        XCTAssertEqual(rows.first?["automaticFill"] as? Bool, false)
        let fill = cli.run(["fill", "https://www.airbnb.co.uk/login", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(fill.code, 66, "nobody chose it: nothing filled")
        XCTAssertFalse(fill.stdout.contains("Jr5@"))
        XCTAssertTrue(fill.stderr.contains("shares its logins"), fill.stderr)
        XCTAssertEqual(cli.run(["list", "discordapp.com", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 66, "no relation: nothing")
    }

    /// The range API on 127.0.0.1: the server must see only 5-hex-digit prefixes.
    func testBreachedPasswordsThroughTheRangeAPIAndOffline() throws {
        let cli = try vault()
        let base = cli.container + "/.."
        let passwordHash = "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8"  // SHA-1("password")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Helpers/range-api").standardized.path)
        server.arguments = [base + "/requests"]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer { server.terminate() }
        let port = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let result = cli.run(["audit", "--json", "--hibp-url", "http://127.0.0.1:\(port)", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let breached = try findings(result).filter { $0.kind == "breached" }
        XCTAssertEqual(Set(breached.map(\.title)), ["weak.example.com", "http://plain.example.com/login"])
        XCTAssertEqual(breached.first?.detail, "seen 3861 times in breaches")
        let requests = try String(contentsOfFile: base + "/requests", encoding: .utf8).split(separator: "\n")
        XCTAssertTrue(requests.allSatisfy { $0.hasPrefix("/range/") && $0.count == "/range/".count + 5 }, "\(requests)")
        XCTAssertEqual(Set(requests).count, requests.count, "one request per distinct prefix")

        // Offline: HIBP's sorted list, searched by bisection.
        var lines = (0..<2000).map { String(format: "%040X:%d", $0 * 7919 + 1, $0 % 50 + 1) }
        lines.append(passwordHash + ":3861")
        lines.sort()
        try (lines.joined(separator: "\r\n") + "\r\n").write(toFile: base + "/pwned.txt", atomically: true, encoding: .utf8)
        let offline = cli.run(["audit", "--json", "--hibp-file", base + "/pwned.txt", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(try findings(offline).filter { $0.kind == "breached" }.count, 2, offline.stderr)
        XCTAssertEqual(try BreachCheck.counts(of: ["password", "not in the list at all"], inFile: base + "/pwned.txt"), [3861, 0])
    }

    func testAWeakMasterPasswordIsAcceptedWithAWarning() {
        let cli = CLIHarness()
        let created = cli.run(["init", "--password-stdin"], stdin: "a\n")
        XCTAssertEqual(created.code, 0)
        XCTAssertTrue(created.stderr.contains("warning: this master password is weak"), created.stderr)
        let strong = CLIHarness()
        XCTAssertFalse(strong.run(["init", "--password-stdin"], stdin: "correct horse battery staple elephant\n").stderr.contains("weak"))
    }
}
