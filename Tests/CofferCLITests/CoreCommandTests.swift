import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

final class CoreCommandTests: XCTestCase {
    func testInitAddShowRemoveRoundTrip() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("github.com", "alice", password: "gh-pw")
        XCTAssertEqual(id.count, 32)

        let show = cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(show.code, 0, show.stderr)
        XCTAssertEqual(show.stdout.split(separator: "\n").first, "gh-pw", "password on the first line")
        XCTAssertTrue(show.stdout.contains("user: alice"))

        let json = cli.run(["show", id, "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["password"] as? String, "gh-pw")
        XCTAssertEqual(object?["user"] as? String, "alice")
        XCTAssertEqual(object?["revision"] as? Int, 1)

        XCTAssertEqual(cli.run(["rm", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 64, "no terminal, no --force")
        XCTAssertEqual(cli.run(["rm", id, "--force", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 66)
    }

    func testExitCodes() throws {
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["show", String(repeating: "a", count: 32), "--password-stdin"], stdin: "x\n").code, 66, "no vault")
        cli.initVault()
        let id = cli.add("example.com", "bob", password: "pw")
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: "wrong\n").code, 77)
        XCTAssertEqual(cli.run(["show", id]).code, 75, "locked, no terminal")
        XCTAssertEqual(cli.run(["show", id, "--no-interaction"], terminal: ScriptedTerminal([CLIHarness.master])).code, 75)
        // An ENTRY that is no id is a name, looked up in the index, never a path.
        XCTAssertEqual(cli.run(["show", "../../etc/passwd", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 66)
        XCTAssertEqual(cli.run(["frobnicate"]).code, 64)
        XCTAssertEqual(cli.run(["add"]).code, 64)

        let recordPath = cli.container + "/records/" + id.prefix(2) + "/" + id
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: recordPath)))
        bytes[40] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: recordPath))
        let corrupt = cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(corrupt.code, 65)
        XCTAssertTrue(corrupt.stderr.contains(id), "the error names the file")
    }

    func testRefusalsPrintNoSecret() {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "bob", password: "TopSecretValue")
        for result in [cli.run(["show", id]), cli.run(["show", id, "--password-stdin"], stdin: "wrong\n")] {
            XCTAssertNotEqual(result.code, 0)
            XCTAssertFalse((result.stdout + result.stderr).contains("TopSecretValue"))
            XCTAssertFalse((result.stdout + result.stderr).contains(CLIHarness.master))
        }
    }

    func testTerminalPromptsAndConfirmation() {
        let cli = CLIHarness()
        let mismatch = ScriptedTerminal(["one", "two"])
        XCTAssertEqual(cli.run(["init"], terminal: mismatch).code, 64, "confirmation mismatch is refused")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.container + "/vault.coffer"))

        XCTAssertEqual(cli.run(["init"], terminal: ScriptedTerminal([CLIHarness.master, CLIHarness.master])).code, 0)
        let terminal = ScriptedTerminal([CLIHarness.master, "site-pw", "site-pw"])
        let add = cli.run(["add", "example.com", "carol"], terminal: terminal)
        XCTAssertEqual(add.code, 0, add.stderr)
        XCTAssertEqual(terminal.prompts.count, 3)
        let id = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let decline = cli.run(["rm", id], terminal: ScriptedTerminal([CLIHarness.master, "n"]))
        XCTAssertEqual(decline.code, 1)
        let accept = cli.run(["rm", id], terminal: ScriptedTerminal([CLIHarness.master, "y"]))
        XCTAssertEqual(accept.code, 0)
    }

    func testPasswdChangesTheMasterPassword() {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "dave", password: "pw")
        XCTAssertEqual(cli.run(["passwd", "--password-stdin"], stdin: "\(CLIHarness.master)\nnew master\n").code, 0)
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 77)
        XCTAssertEqual(cli.run(["show", id, "--password-stdin"], stdin: "new master\n").code, 0)
    }

    func testPasswordFile() throws {
        let cli = CLIHarness()
        cli.initVault()
        let file = cli.container + "-pw"
        try Data((CLIHarness.master + "\nignored second line\n").utf8).write(to: URL(fileURLWithPath: file))
        let id = cli.add("example.com", "erin", password: "pw")
        XCTAssertEqual(cli.run(["show", id, "--password-file", file]).code, 0)
    }

    func testGlobalOptionsMayPrecedeTheCommand() {
        let cli = CLIHarness()
        let result = cli.run(["--container", cli.container, "init", "--password-stdin"], stdin: "m\n", container: false)
        XCTAssertEqual(result.code, 0, result.stderr)
        let again = cli.run(["init", "--password-stdin"], stdin: "m\n")
        XCTAssertEqual(again.code, 73, "EX_CANTCREAT: a vault is already there; " + again.stderr)
    }

    func testAddGenerate() throws {
        let cli = CLIHarness()
        cli.initVault()
        let result = cli.run(["add", "example.com", "gen", "--generate=32", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(result.code, 0, result.stderr)
        let id = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let show = cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(show.stdout.split(separator: "\n").first?.count, 32)
    }
}

final class UsageTests: XCTestCase {
    func testDidYouMean() {
        let cli = CLIHarness()
        XCTAssertTrue(cli.run(["shwo"]).stderr.contains("did you mean 'show'?"))
        let option = cli.run(["add", "x", "--genrate"])
        XCTAssertEqual(option.code, 64)
        XCTAssertTrue(option.stderr.contains("did you mean '--generate'?"), option.stderr)
        XCTAssertTrue(option.stderr.contains("See 'coffer add --help'."))
    }

    func testHelpListsEveryCommandAndEachHasHelp() {
        let cli = CLIHarness()
        let overview = cli.run(["help"])
        XCTAssertEqual(overview.code, 0)
        for command in CommandLineTool.commands {
            XCTAssertTrue(overview.stdout.contains(command.name), command.name)
            let help = cli.run([command.name, "--help"])
            XCTAssertEqual(help.code, 0)
            XCTAssertTrue(help.stdout.contains("Usage: coffer \(command.usage)"))
        }
    }

    /// No option of any command takes a password value on argv (visible in /proc/PID/cmdline).
    func testNoCommandAcceptsAPasswordOnTheCommandLine() {
        for command in CommandLineTool.commands {
            for option in command.options + GlobalOptions.all where option.kind != .flag {
                let name = option.name.lowercased()
                XCTAssertFalse(name.contains("password") && name != "password-file", "\(command.name) --\(option.name)")
                XCTAssertFalse(["pass", "pw", "secret", "master", "key"].contains(name), "\(command.name) --\(option.name)")
            }
        }
        let cli = CLIHarness()
        XCTAssertEqual(cli.run(["init", "--password=hunter2"]).code, 64)
        XCTAssertEqual(cli.run(["init", "--password", "hunter2"]).code, 64)
    }

    func testGenerate() throws {
        let cli = CLIHarness()
        let json = cli.run(["generate", "--length", "40", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual((object?["password"] as? String)?.count, 40)
        XCTAssertGreaterThan(object?["entropyBits"] as? Double ?? 0, 200)
        let apple = cli.run(["generate", "--style", "apple"]).stdout.trimmingCharacters(in: .newlines)
        XCTAssertNotNil(apple.range(of: #"^[a-z0-9A-Z]{6}-[a-z0-9A-Z]{6}-[a-z0-9A-Z]{6}$"#, options: .regularExpression), apple)
        XCTAssertEqual(cli.run(["generate", "--length", "2"]).code, 64)
        XCTAssertEqual(cli.run(["generate", "--style", "nope"]).code, 64)
    }

    /// `--rules` and `--for` (SPEC.md §12.1): the rule shapes the password, `--json` names it and
    /// where it came from; a typed rule that is malformed or cannot be met is a usage error, a
    /// published one that is unusable falls back to the default with a warning.
    func testGenerateForASiteRule() throws {
        let cli = CLIHarness()
        cli.environment["COFFER_WEB_QUIRKS"] = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Data/web-quirks").standardized.path
        func object(_ arguments: [String]) throws -> [String: Any] {
            let result = cli.run(arguments + ["--json"])
            XCTAssertEqual(result.code, 0, result.stderr)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
        let typed = try object(["generate", "--rules", "minlength: 8; maxlength: 12; required: digit; allowed: lower"])
        let password = try XCTUnwrap(typed["password"] as? String)
        XCTAssertEqual(password.count, 12)
        XCTAssertTrue(password.allSatisfy { $0.isLowercase || $0.isNumber } && password.contains(where: \.isNumber), password)
        XCTAssertEqual(typed["rules"] as? String, "minlength: 8; maxlength: 12; required: digit; allowed: lower, digit")
        XCTAssertEqual(typed["rulesFrom"] as? String, "rules")
        XCTAssertEqual((try object(["generate", "10", "--rules", "allowed: [ab]"])["password"] as? String)?.count, 10)

        let amex = try object(["generate", "--for", "https://online.americanexpress.com/myca/logon"])
        XCTAssertEqual(amex["rulesFrom"] as? String, "americanexpress.com", "a subdomain takes its site's published rule")
        let rules = try PasswordRules(parsing: try XCTUnwrap(amex["rules"] as? String))
        XCTAssertTrue(rules.accepts(try XCTUnwrap(amex["password"] as? String)))
        XCTAssertLessThanOrEqual((amex["password"] as? String)?.count ?? 99, 20)
        let unknown = try object(["generate", "--for", "example.org"])
        XCTAssertEqual(unknown["rulesFrom"] as? String, "default")
        XCTAssertTrue(unknown["rules"] is NSNull)

        for bad in [["--rules", "minlength: 9; maxlength: 3"], ["--rules", "foo: 3"], ["--rules", "x", "--for", "a.com"], ["--rules", "allowed: lower", "--style", "apple"], ["--for", "not a host"]] {
            XCTAssertEqual(cli.run(["generate"] + bad).code, 64, bad.joined(separator: " "))
        }

        // A published rule that cannot be met: warned about, the default used.
        let directory = FileSystem.parentDirectory(of: cli.container) + "/quirks"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(#"{"broken.example": {"password-rules": "minlength: 30; maxlength: 10"}}"#.utf8).write(to: URL(fileURLWithPath: directory + "/password-rules.json"))
        cli.environment["COFFER_WEB_QUIRKS"] = directory
        let broken = cli.run(["generate", "--for", "broken.example", "--json"])
        XCTAssertEqual(broken.code, 0, broken.stderr)
        XCTAssertTrue(broken.stdout.contains(#""rulesFrom":"default""#), broken.stdout)
        XCTAssertTrue(broken.stderr.contains("the published rule for broken.example is unusable"), broken.stderr)
    }
}

final class ListAndSearchTests: XCTestCase {
    func testListWorksWhileLockedAndShowsNoPassword() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("github.com", "alice", password: "SuperSecret1")
        _ = cli.add("https://mail.example.com/", "bob", password: "SuperSecret2")
        let list = cli.run(["list"])  // no password given, no terminal: the device key suffices
        XCTAssertEqual(list.code, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("github.com") && list.stdout.contains("alice") && list.stdout.contains(id))
        XCTAssertFalse((list.stdout + list.stderr).contains("SuperSecret"))

        let json = cli.run(["list", "https://github.com/login", "--json"])
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(array?.count, 1)
        XCTAssertEqual(array?.first?["user"] as? String, "alice")
        XCTAssertEqual(array?.first?["recordIdentifier"] as? String, id)
        XCTAssertEqual((array?.first?["serviceIdentifier"] as? [String: Any])?["type"] as? String, "domain")
        XCTAssertEqual(array?.first?["rank"] as? Int, 0)

        XCTAssertEqual(cli.run(["list", "nothing.example"]).code, 66)
        let search = cli.run(["search", "MAIL"])
        XCTAssertEqual(search.code, 0)
        XCTAssertTrue(search.stdout.contains("bob"))
        XCTAssertFalse(search.stdout.contains("alice"))
    }

    /// The table: service and user columns padded to the widest cell (counted in Unicode
    /// scalars, at most 40 and 24), two spaces between columns, then the id; sorted by service,
    /// then user (as bytes). `--json` of the whole list carries the same rows in the same order.
    func testWholeListTableLayoutAndJSON() throws {
        let cli = CLIHarness()
        cli.initVault()
        // A URL login is listed by its host: the path is no part of the column.
        let long = "https://a-service-name-well-past-forty-columns.example.com/login"
        let longHost = "a-service-name-well-past-forty-columns.example.com"
        let rows = [
            (cli.add("example.com", "ünïcødé", password: "pw1"), "example.com", "ünïcødé"),
            (cli.add(long, "bob", password: "pw2"), longHost, "bob"),
            (cli.add("x.org", "carol", password: "pw3"), "x.org", "carol"),
        ].sorted { ($0.1, $0.2) < ($1.1, $1.2) }
        func padded(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.unicodeScalars.count) + 2)
        }
        let expected = rows.map { padded($0.1, 40) + padded($0.2, 7) + $0.0 + "\n" }.joined()
        XCTAssertEqual(cli.run(["list"]).stdout, expected)

        let json = try JSONSerialization.jsonObject(with: Data(cli.run(["list", "--json"]).stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(json?.map { $0["recordIdentifier"] as? String }, rows.map(\.0))
        XCTAssertEqual(json?.map { $0["user"] as? String }, rows.map(\.2))
        XCTAssertEqual(cli.run(["search", "ÜNÏ"]).stdout, padded("example.com", 11) + padded("ünïcødé", 7) + rows.first { $0.2 == "ünïcødé" }!.0 + "\n")
    }

    /// `--tag` keeps the items that carry the tag, byte for byte (the index holds each item's
    /// tags, so while locked too), with or without SERVICE, in every output form.
    func testListByTagWhileLocked() throws {
        let cli = CLIHarness()
        cli.initVault()
        let work = cli.add("github.com", "alice", password: "pw1")
        let home = cli.add("gitlab.com", "alice", password: "pw2")
        XCTAssertEqual(cli.run(["edit", work, "--tag", "work", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(cli.run(["edit", home, "--tag", "Work", "--tag", "home", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        let note = cli.run(["add", "--kind", "note", "--name", "Desk code", "--tag", "work", "--password-stdin"], stdin: CLIHarness.master + "\n\n")
        XCTAssertEqual(note.code, 0, note.stderr)
        XCTAssertEqual(cli.run(["lock"]).code, 0)
        func ids(_ arguments: [String]) -> [String] {
            cli.run(["list", "--format", "{id}"] + arguments).stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(Set(ids(["--tag", "work"])).count, 2, "the login and the note tagged work")
        XCTAssertTrue(ids(["--tag", "work"]).contains(work))
        XCTAssertEqual(ids(["--tag", "Work"]), [home], "compared exactly")
        XCTAssertEqual(ids(["--tag", "hom"]), [], "a whole tag, not a part")
        let table = cli.run(["list", "--tag", "home"])
        XCTAssertTrue(table.stdout.contains("gitlab.com") && !table.stdout.contains("github.com"), table.stdout)
        let json = try JSONSerialization.jsonObject(with: Data(cli.run(["list", "https://github.com", "--tag", "work", "--json"]).stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(json?.compactMap { $0["recordIdentifier"] as? String }, [work])
        XCTAssertEqual(cli.run(["list", "github.com", "--tag", "home"]).code, 66, "no login of that site carries it")
    }

    func testListNeedsThePasswordWhenTheStoreIsNotEnabledHere() {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("github.com", "alice", password: "pw")
        let otherDevice = CLIHarness()
        let result = otherDevice.run(["list", "--container", cli.container], container: false)
        XCTAssertEqual(result.code, 75, "locked, store not enabled on this device, no terminal")
        let unlocked = otherDevice.run(["list", "--container", cli.container, "--password-stdin"], stdin: CLIHarness.master + "\n", container: false)
        XCTAssertEqual(unlocked.code, 0, unlocked.stderr)
        XCTAssertTrue(unlocked.stdout.contains("alice"))
    }
}

final class InterchangeCommandTests: XCTestCase {
    func testImportIsAllOrNothingAndExportNeedsPlaintext() throws {
        let cli = CLIHarness()
        cli.initVault()
        let broken = cli.container + "-broken.csv"
        try Data("name,url,username,password,note\nA,https://a.example,u,p,\nB,https://b.example,u,\"p\n".utf8).write(to: URL(fileURLWithPath: broken))
        let failed = cli.run(["import", broken, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(failed.code, 65)
        XCTAssertTrue(failed.stderr.contains("line 3"), failed.stderr)
        XCTAssertEqual(cli.run(["list", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout, "", "nothing imported")

        // An exact copy is skipped; "A again" differs in its name only, and is kept and named.
        let good = cli.container + "-good.csv"
        try Data("name,url,username,password,note\nA,https://a.example,u1,p1,\nA,https://a.example,u1,p1,\nA again,https://a.example,u1,p1,\nB,https://b.example,u2,\"p,2\",\n".utf8)
            .write(to: URL(fileURLWithPath: good))
        let dry = cli.run(["import", good, "--dry-run", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertTrue(dry.stderr.contains("would import 3 items") && dry.stderr.contains("skipped 1 duplicate"), dry.stderr)
        XCTAssertTrue(dry.stderr.contains("possible duplicate, both kept: line 4 and line 2"), dry.stderr)
        XCTAssertEqual(cli.run(["list"]).stdout, "")
        XCTAssertEqual(cli.run(["import", good, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)

        XCTAssertEqual(cli.run(["export", "--format", "csv", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 64)
        let csv = cli.run(["export", "--format", "csv", "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(csv.code, 0)
        XCTAssertTrue(csv.stdout.contains("\"p,2\""), csv.stdout)
        // What export writes, import reads back.
        let roundTrip = CLIHarness()
        roundTrip.initVault()
        try Data(csv.stdout.utf8).write(to: URL(fileURLWithPath: roundTrip.container + "-in.csv"))
        XCTAssertEqual(roundTrip.run(["import", roundTrip.container + "-in.csv", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0)
        XCTAssertEqual(roundTrip.run(["list"]).stdout.split(separator: "\n").count, 3)
    }
}
