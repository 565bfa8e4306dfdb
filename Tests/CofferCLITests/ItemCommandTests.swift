import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// Items beyond logins on the command line: names, kinds, tags, one-time codes, QR codes.
final class ItemCommandTests: XCTestCase {
    let uri = "otpauth://totp/GitLab:me?secret=JBSWY3DPEHPK3PXP&issuer=GitLab"

    func harness() -> CLIHarness {
        let cli = CLIHarness()
        cli.initVault()
        return cli
    }

    func unlocked(_ arguments: [String], _ cli: CLIHarness, stdin extra: String = "", stdoutIsTerminal: Bool = false) -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n" + extra, stdoutIsTerminal: stdoutIsTerminal)
    }

    func testALoginWithACodeAndANoteAreNamedListedAndShown() throws {
        let cli = harness()
        let login = unlocked(["add", "gitlab.com", "me", "--name", "GitLab", "--tag", "Work", "--tag", "favorite", "--otp"], cli,
                             stdin: "hunter2\n\(uri)\n")
        XCTAssertEqual(login.code, 0, login.stderr)
        let note = unlocked(["add", "--name", "Wi-Fi at home", "--kind", "note"], cli)
        XCTAssertEqual(note.code, 0, note.stderr)
        let noteText = "\nname: Wi-Fi at home\nkind: note\nuser: \n\npassphrase: x\n"
        XCTAssertEqual(unlocked(["edit", "Wi-Fi at home"], cli, stdin: noteText).code, 0, "notes come from the item's text on stdin, never argv")
        XCTAssertEqual(unlocked(["add", "--kind", "note"], cli).code, 64, "an item needs a service or a name")

        let list = unlocked(["list"], cli)
        XCTAssertTrue(list.stdout.contains("Wi-Fi at home"), list.stdout)
        XCTAssertEqual(list.stdout.split(separator: "\n").filter { $0.contains("gitlab.com") }.count, 1, "the code is the same item: one line")
        let rows = try JSONSerialization.jsonObject(with: Data(unlocked(["list", "--json"], cli).stdout.utf8)) as! [[String: Any]]
        XCTAssertEqual(Set(rows.compactMap { $0["type"] as? String }), ["password", "oneTimeCode", "item"])
        XCTAssertEqual(rows.first { $0["type"] as? String == "item" }?["kind"] as? String, "note")
        XCTAssertNil(rows.first { $0["type"] as? String == "item" }?["serviceIdentifier"], "a note has no service, never a fake one")

        let shown = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "gitlab", "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual(shown["name"] as? String, "GitLab", "found by name, case-insensitively")
        XCTAssertEqual(shown["kind"] as? String, "login")
        XCTAssertEqual(shown["tags"] as? [String], ["Work", "favorite"])
        XCTAssertEqual(shown["otp"] as? String, uri)
        XCTAssertEqual((shown["fields"] as? [Any])?.count, 0)
        let text = unlocked(["show", "Wi-Fi at home"], cli).stdout
        XCTAssertTrue(text.contains("kind: note") && text.hasSuffix("\n\npassphrase: x\n") && !text.contains("user:"), text)
        XCTAssertEqual(unlocked(["show", "nothing by this name"], cli).code, 66)
    }

    func testOTPPrintsTheCodeOathtoolComputes() throws {
        let cli = harness()
        XCTAssertEqual(unlocked(["add", "gitlab.com", "me", "--name", "GitLab", "--otp"], cli, stdin: "pw\n\(uri)\n").code, 0)
        let json = try JSONSerialization.jsonObject(with: Data(unlocked(["otp", "GitLab", "--json"], cli).stdout.utf8)) as! [String: Any]
        let expected = try oathtool(at: Date())
        // The two codes may straddle a step boundary; `remaining` says which.
        XCTAssertTrue(json["code"] as? String == expected || (json["remaining"] as? Int ?? 0) >= 29, "\(json) vs \(expected)")
        XCTAssertEqual(json["period"] as? Int, 30)
        XCTAssertEqual(unlocked(["fill", "gitlab.com", "--otp"], cli).stdout.count, 7, "six digits and a newline, through the provider")
    }

    func testHOTPMovesItsCounterOnWithEveryCode() throws {
        let cli = harness()
        let hotp = "otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0"  // RFC 4226's secret
        XCTAssertEqual(unlocked(["add", "--name", "token", "--otp"], cli, stdin: "pw\n\(hotp)\n").code, 0)
        let codes = (0..<3).map { _ in unlocked(["otp", "token"], cli).stdout.trimmingCharacters(in: .newlines) }
        XCTAssertEqual(codes, ["755224", "287082", "359152"], "RFC 4226 Appendix D, counters 0, 1, 2")
        XCTAssertTrue(unlocked(["show", "token", "--json"], cli).stdout.contains("counter=3"))
    }

    func testOTPSecretsComeFromStdinOrTheTerminalAndBadOnesWriteNothing() throws {
        let cli = harness()
        for bad in ["otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=99", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=0", "not base32!"] {
            let result = unlocked(["add", "example.com", "u", "--otp"], cli, stdin: "pw\n\(bad)\n")
            XCTAssertEqual(result.code, 65, bad)
            XCTAssertFalse(result.stderr.contains("JBSWY3DPEHPK3PXP"), "the secret is never echoed")
        }
        XCTAssertEqual(unlocked(["list", "--json"], cli).stdout, "[]\n", "nothing half-written")
        // A bare secret, typed on the terminal, is stored as a URI.
        let terminal = ScriptedTerminal([CLIHarness.master, "pw", "pw", "jbsw y3dp ehpk 3pxp"])
        let added = cli.run(["add", "example.com", "u", "--name", "Example", "--otp"], terminal: terminal)
        XCTAssertEqual(added.code, 0, added.stderr)
        XCTAssertTrue(unlocked(["show", "Example"], cli).stdout.contains("otp: otpauth://totp/u?secret=JBSWY3DPEHPK3PXP"))
        XCTAssertEqual(unlocked(["otp", "Example", "--json"], cli).code, 0)
        XCTAssertEqual(unlocked(["edit", "Example", "--remove-otp"], cli).code, 0)
        XCTAssertEqual(unlocked(["otp", "Example"], cli).code, 66, "no code: no matching credential")
    }

    func testEditKeepsThePasswordHistoryAndTags() throws {
        let cli = harness()
        XCTAssertEqual(unlocked(["add", "example.com", "u", "--name", "Ex"], cli, stdin: "first\n").code, 0)
        XCTAssertEqual(unlocked(["edit", "Ex", "--new-password", "--tag", "a", "--name", "Example"], cli, stdin: "second\n").code, 0)
        XCTAssertEqual(unlocked(["edit", "Example", "--new-password", "--remove-tag", "a"], cli, stdin: "third\n").code, 0)
        let shown = try JSONSerialization.jsonObject(with: Data(unlocked(["show", "example", "--json"], cli).stdout.utf8)) as! [String: Any]
        XCTAssertEqual((shown["passwordHistory"] as? [[String: Any]])?.compactMap { $0["password"] as? String }, ["second", "first"])
        XCTAssertEqual(shown["tags"] as? [String], [])
        XCTAssertEqual(unlocked(["edit", "Example", "--remove-service", "example.com"], cli).code, 0, "an item may have no service")
        XCTAssertTrue(unlocked(["list"], cli).stdout.hasPrefix("Example"))
    }

    /// The QR code is the one Debian's `qrencode` draws for the same text (8-bit mode, level M),
    /// and never goes anywhere but a terminal.
    func testQRCodesMatchQrencodeAndOnlyGoToATerminal() throws {
        let cli = harness()
        XCTAssertEqual(unlocked(["add", "example.com", "u", "--name", "Ex", "--otp"], cli, stdin: "p@ss wörd\n\(uri)\n").code, 0)
        XCTAssertEqual(unlocked(["show", "Ex", "--qr"], cli).code, 64, "stdout is not a terminal")
        XCTAssertEqual(unlocked(["otp", "Ex", "--qr"], cli).code, 64)
        let drawn = unlocked(["otp", "Ex", "--qr"], cli, stdoutIsTerminal: true)
        XCTAssertEqual(drawn.code, 0, drawn.stderr)
        XCTAssertEqual(try QRCodeOutput.encode(uri), try qrencode(uri))
        XCTAssertEqual(try QRCodeOutput.encode("p@ss wörd"), try qrencode("p@ss wörd"))
        let modules = try QRCodeOutput.encode(uri).count
        let lines = drawn.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, (modules + 2 * QRCodeOutput.margin + 1) / 2, "two modules per line")
    }

    private func qrencode(_ text: String) throws -> [[Bool]] {
        let ascii = try run("/usr/bin/qrencode", ["-8", "-l", "M", "-m", "0", "-t", "ASCII", "-o", "-"], stdin: text)
        // ASCII draws each module as two characters, '#' for dark.
        return ascii.split(separator: "\n").map { line in stride(from: 0, to: line.count, by: 2).map { Array(line)[$0] == "#" } }
    }

    private func oathtool(at date: Date) throws -> String {
        try run("/usr/bin/oathtool", ["--totp", "--base32", "--now=@\(Int(date.timeIntervalSince1970))", "-"], stdin: "JBSWY3DPEHPK3PXP\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func run(_ tool: String, _ arguments: [String], stdin: String) throws -> String {
        let result = try runTool(tool, arguments, stdin: stdin)
        XCTAssertEqual(result.code, 0, "\(tool) \(arguments): \(result.stderr)")
        return result.stdout
    }
}

/// `coffer edit ENTRY` with no options: the item as text in `$EDITOR` on a tmpfs, or on stdin.
final class EditAsTextTests: XCTestCase {
    func testTheEditorChangesTheItemAndLeavesNothingBehind() throws {
        let cli = CLIHarness()
        cli.initVault()
        XCTAssertEqual(cli.run(["add", "example.com", "alice", "--name", "Ex", "--password-stdin"], stdin: "\(CLIHarness.master)\nold pw\n").code, 0)
        // $XDG_RUNTIME_DIR on a disk (as in a container or a 'su' session): the text must go to
        // /dev/shm instead, never to that disk.
        let runtime = cli.container + "/../runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try XCTSkipIf(FileSystem.isMemoryBacked(runtime) || !FileSystem.isMemoryBacked("/dev/shm"), "needs a disk-backed scratch and a tmpfs /dev/shm")
        cli.environment["XDG_RUNTIME_DIR"] = runtime
        // The "editor": records the file's mode and directory, then edits it like a person would.
        let log = cli.container + "/../editor.log"
        let script = cli.container + "/../editor.sh"
        try """
        #!/bin/sh
        stat -c '%a' "$1" > "\(log)"; stat -c '%a' "$(dirname "$1")" >> "\(log)"; echo "$1" >> "\(log)"
        sed -i -e '1s/.*/new pw/' -e 's/^user: alice$/user: bob/' "$1"
        printf 'field pin (hidden): 1234\\n' > "$1.tmp"; sed -i '/^url:/r '"$1.tmp" "$1"; rm "$1.tmp"
        printf 'a note\\n' >> "$1"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        cli.environment["EDITOR"] = script
        let terminal = ScriptedTerminal([CLIHarness.master])
        let edited = cli.run(["edit", "Ex"], terminal: terminal)
        XCTAssertEqual(edited.code, 0, edited.stderr)
        let shown = try JSONSerialization.jsonObject(with: Data(cli.run(["show", "Ex", "--json", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.utf8)) as! [String: Any]
        XCTAssertEqual(shown["password"] as? String, "new pw")
        XCTAssertEqual(shown["user"] as? String, "bob")
        XCTAssertEqual(shown["notes"] as? String, "a note")
        XCTAssertEqual((shown["fields"] as? [[String: Any]])?.first?["hidden"] as? Bool, true)
        XCTAssertEqual((shown["passwordHistory"] as? [[String: Any]])?.first?["password"] as? String, "old pw")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(Array(lines.prefix(2)), ["600", "700"], "a 0600 file in a 0700 directory")
        XCTAssertTrue(lines[2].hasPrefix("/dev/shm/"), "on a tmpfs, not the disk-backed runtime directory: \(lines[2])")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: runtime), [], "nothing on the disk")
        XCTAssertFalse(FileManager.default.fileExists(atPath: String(lines[2])), "wiped and removed")
        XCTAssertThrowsError(try EditorSession.makePrivateDirectory(prefix: "t", environment: [:], candidates: [runtime]),
                             "no tmpfs at all: refused, nothing written")
        let memory = try EditorSession.makePrivateDirectory(prefix: "t", environment: [:], candidates: [runtime, "/dev/shm"])
        XCTAssertTrue(memory.hasPrefix("/dev/shm/"))
        rmdir(memory)

        // An editor that changes nothing writes nothing; one that breaks the text is refused.
        cli.environment["EDITOR"] = "true"
        XCTAssertTrue(cli.run(["edit", "Ex"], terminal: ScriptedTerminal([CLIHarness.master])).stderr.contains("no change"))
        try "#!/bin/sh\nprintf 'pw\\nthis line has no colon\\n' > \"$1\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        cli.environment["EDITOR"] = script
        let broken = cli.run(["edit", "Ex"], terminal: ScriptedTerminal([CLIHarness.master, "n"]))
        XCTAssertEqual(broken.code, 1, "declined to edit again: nothing changed, and no 65 (that is a corrupt vault)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: runtime), [])
        let piped = cli.run(["edit", "Ex", "--password-stdin"], stdin: "\(CLIHarness.master)\npw\nkind: spaceship\n")
        XCTAssertEqual(piped.code, 64, "a document from stdin that does not parse changes nothing")
        XCTAssertTrue(piped.stderr.contains("line 2"), piped.stderr)
        XCTAssertTrue(cli.run(["show", "Ex", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout.hasPrefix("new pw\n"))
    }

    func testTheTextFormRoundTripsEveryMember() throws {
        let record = Record(
            id: try RecordID.random(), serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://a.example/login"), CredentialServiceIdentifier(parsing: "a.example")],
            user: "me", password: "p@ss: word\\", notes: "line 1\n\nline 3", fields: [RecordField(name: "user", value: "shadowed"), RecordField(name: "pin", value: "1", hidden: true)],
            created: Date(), modified: Date(), revision: 1, matchMode: .exact, name: "A", kind: .card, tags: ["x", "y z"],
            otp: "otpauth://totp/me?secret=JBSWY3DPEHPK3PXP")
        let document = ItemDocument(record)
        XCTAssertEqual(try ItemDocument(parsing: document.text()), document)
        var multiline = record
        multiline.password = "two\nlines"
        multiline.fields = [RecordField(name: "key", value: "-----BEGIN\n\tKEY\n-----", hidden: true), RecordField(name: "a:b\n%", value: "")]
        let folded = ItemDocument(multiline)
        XCTAssertEqual(try ItemDocument(parsing: folded.text()), folded, "line breaks fold onto tab-led lines and come back")
        XCTAssertThrowsError(try ItemDocument(parsing: folded.text(masked: true)), "a masked text is never stored")
    }
}

/// `show` and `edit` speak one text format (issue 28, item 9; SPEC.md §10.2).
final class ShowEditRoundTripTests: XCTestCase {
    func unlocked(_ arguments: [String], _ cli: CLIHarness, stdin: String = "", stdoutIsTerminal: Bool = false) -> RunResult {
        cli.run(arguments + ["--password-stdin"], stdin: CLIHarness.master + "\n" + stdin, stdoutIsTerminal: stdoutIsTerminal)
    }

    func testShowPipedIntoEditChangesNothingForEveryKind() throws {
        let cli = CLIHarness()
        cli.initVault()
        let login = cli.add("https://login.example/signin", "lee", password: "pw: with colon")
        XCTAssertEqual(unlocked(["edit", login], cli, stdin: """
            pw: with colon
            name: Example
            user: lee
            url: https://login.example/signin
            url: login.example
            tags: work, x y
            match: site
            field pin (hidden): 1234
            field user: a field named user
            otp: otpauth://totp/lee?secret=JBSWY3DPEHPK3PXP

            notes line 1
            key: not a field

            """).code, 0)
        var ids = [login]
        for (kind, body) in [
            ("note", "\nname: Wi-Fi\nkind: note\n\nline one\nssid: home\n\tindented\n"),
            ("card", "\nname: Visa\nkind: card\nfield number: 4111 1111 1111 1111\nfield code (hidden): 123\n\n"),
            ("identity", "\nname: Me\nkind: identity\nuser: me@example.com\nfield address: 1 Main St\n\tSpringfield\n\n"),
        ] {
            let added = unlocked(["add", "--name", "new-\(kind)", "--kind", kind], cli)
            XCTAssertEqual(added.code, 0, added.stderr)
            let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let edited = unlocked(["edit", id], cli, stdin: body)
            XCTAssertEqual(edited.code, 0, "\(kind): \(edited.stderr)")
            ids.append(id)
        }
        let key = unlocked(["ssh-key", "add", "deploy-key"], cli)
        XCTAssertEqual(key.code, 0, key.stderr)
        ids.append("deploy-key")

        for id in ids {
            let before = unlocked(["show", id, "--json"], cli).stdout
            let text = unlocked(["show", id], cli).stdout
            let piped = unlocked(["edit", id], cli, stdin: text)
            XCTAssertEqual(piped.code, 0, "\(id): \(piped.stderr)\n\(text)")
            XCTAssertTrue(piped.stderr.contains("no change"), "\(id): \(piped.stderr)\n\(text)")
            XCTAssertEqual(unlocked(["show", id, "--json"], cli).stdout, before, "\(id): nothing changed")
        }
        let note = unlocked(["show", "Wi-Fi"], cli).stdout
        XCTAssertFalse(note.contains("user:"), "a note has no empty user line: " + note)
        XCTAssertTrue(note.hasSuffix("\n\nline one\nssid: home\n\tindented\n"), "the notes verbatim after a blank line: " + note)
        XCTAssertTrue(unlocked(["fill", "login.example"], cli).stdout == "pw: with colon\n", "the services survived")

        // On a terminal hidden values are masked; such a text is refused by edit.
        let masked = unlocked(["show", "Visa"], cli, stdoutIsTerminal: true).stdout
        XCTAssertTrue(masked.contains("code (hidden): ********") && !masked.contains("123"), masked)
        XCTAssertEqual(unlocked(["edit", "Visa"], cli, stdin: masked).code, 64)
        // Another item's text is refused rather than copied over this one.
        XCTAssertEqual(unlocked(["edit", "Visa"], cli, stdin: unlocked(["show", "Me"], cli).stdout).code, 64)
        XCTAssertTrue(unlocked(["show", "Visa"], cli).stdout.contains("code (hidden): 123"))
    }

    /// A card's and an identity's members (issue 54, item 1; SPEC.md §6.8, §10.2): `add` reads them
    /// as the text's lines, `show` prints them (secrets masked on a terminal), `show | edit`
    /// changes nothing, a value out of the rules is refused naming its line, and the editor opens
    /// on every key of the kind.
    func testCardsAndIdentitiesSpeakTheirMembers() throws {
        let cli = CLIHarness()
        cli.initVault()
        let card = unlocked(["add", "--name", "Visa", "--kind", "card"], cli, stdin: """
            cardholder: Ann Example
            number: 4111 1111-1111 1111
            expiry: 7/29
            security code: 123
            pin: 0000

            billing phone 555 0100

            """)
        XCTAssertEqual(card.code, 0, card.stderr)
        XCTAssertEqual(unlocked(["show", "Visa"], cli).stdout, """

            name: Visa
            kind: card
            cardholder: Ann Example
            number: 4111111111111111
            expiry: 07/2029
            security code: 123
            pin: 0000
            id: \(card.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            revision: 1
            modified: \(try XCTUnwrap(unlocked(["show", "Visa"], cli).stdout.split(separator: "\n").first { $0.hasPrefix("modified: ") }).dropFirst(10))

            billing phone 555 0100

            """)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["show", "Visa", "--json"], cli).stdout.utf8)) as? [String: Any])
        XCTAssertEqual((json["card"] as? [String: Any])?["expiryYear"] as? Int, 2029)
        XCTAssertEqual((json["fields"] as? [Any])?.count, 0, "members, not fields")
        let masked = unlocked(["show", "Visa"], cli, stdoutIsTerminal: true).stdout
        XCTAssertTrue(masked.contains("number: ********") && masked.contains("security code: ********") && masked.contains("pin: ********"), masked)
        XCTAssertFalse(masked.contains("4111") || masked.contains("123\n"), masked)
        XCTAssertEqual(unlocked(["edit", "Visa"], cli, stdin: masked).code, 64, "a masked text is never stored")

        let identity = unlocked(["add", "--name", "Home", "--kind", "identity", "--tag", "family"], cli, stdin: """
            user: ann
            given name: Ann
            family name: Example
            address: 1 Storgata
            address: Apt 2
            city: Oslo
            country: norway
            passport number: P123

            """)
        XCTAssertEqual(identity.code, 0, identity.stderr)
        let home = unlocked(["show", "Home"], cli).stdout
        XCTAssertTrue(home.contains("given name: Ann\nfamily name: Example\naddress: 1 Storgata\naddress: Apt 2\ncity: Oslo\ncountry: NO\npassport number: P123\n"), home)
        XCTAssertTrue(unlocked(["show", "Home"], cli, stdoutIsTerminal: true).stdout.contains("passport number: ********"))
        for entry in ["Visa", "Home"] {
            let before = unlocked(["show", entry, "--json"], cli).stdout
            let piped = unlocked(["edit", entry], cli, stdin: unlocked(["show", entry], cli).stdout)
            XCTAssertTrue(piped.stderr.contains("no change"), "\(entry): \(piped.stderr)")
            XCTAssertEqual(unlocked(["show", entry, "--json"], cli).stdout, before)
        }

        // A value out of the rules names its line, and nothing is written.
        let text = unlocked(["show", "Visa"], cli).stdout
        for (edited, reason) in [
            (text.replacingOccurrences(of: "number: 4111111111111111", with: "number: 4111"), "8 to 19 digits"),
            (text.replacingOccurrences(of: "expiry: 07/2029", with: "expiry: 13/2029"), "MM/YY"),
            (text.replacingOccurrences(of: "pin: 0000", with: "pin: 0000\nemail: a@example.com"), "'email' is a member of an identity"),
            (text.replacingOccurrences(of: "pin: 0000", with: "pin: 0000\nnumbr: 1"), "unknown key 'numbr'"),
        ] {
            let result = unlocked(["edit", "Visa"], cli, stdin: edited)
            XCTAssertEqual(result.code, 64, edited)
            XCTAssertTrue(result.stderr.contains(reason) && result.stderr.contains("line "), result.stderr)
        }
        XCTAssertTrue(unlocked(["add", "--name", "X", "--kind", "identity"], cli, stdin: "country: Atlantis\n").stderr.contains("standard input line 1: no country 'Atlantis'"))
        XCTAssertEqual(unlocked(["show", "Visa", "--json"], cli).stdout.contains("\"revision\":1"), true, "nothing was written")

        // On a terminal, add opens the editor on the kind's every key.
        let log = cli.container + "/../template.txt", script = cli.container + "/../card-editor.sh"
        try "#!/bin/sh\ncp \"$1\" \"\(log)\"\nsed -i 's/^number:.*$/number: 5555 4444 3333 1111/' \"$1\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        cli.environment["EDITOR"] = script
        let added = cli.run(["add", "--name", "Work card", "--kind", "card"], terminal: ScriptedTerminal([CLIHarness.master]))
        XCTAssertEqual(added.code, 0, added.stderr)
        XCTAssertEqual(try String(contentsOfFile: log, encoding: .utf8), """

            name: Work card
            kind: card
            cardholder: 
            number: 
            brand: 
            expiry: 
            security code: 
            pin: 
            valid from: 
            issue number: 


            """)
        XCTAssertTrue(unlocked(["show", "Work card"], cli).stdout.contains("\nnumber: 5555444433331111\n"))
    }

    /// `edit` refuses what it does not understand (issue 49, item 4): a typo in a key, a removed
    /// line the item's kind always has, or an invalid value is shown with its line; nothing is
    /// written, the user name is never wiped; a piped text exits 64, a declined re-edit 1.
    func testEditRefusesWhatItDoesNotUnderstand() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "alice", password: "pw")
        let text = unlocked(["show", id], cli).stdout
        for (edited, reason) in [
            (text.replacingOccurrences(of: "user: alice", with: "usr: typo"), "unknown key 'usr'"),
            (text.replacingOccurrences(of: "user: alice\n", with: ""), "'user:' line was removed"),
            (text.replacingOccurrences(of: "user: alice", with: "user: alice\nkind: spaceship"), "kind must be one of"),
            (text.replacingOccurrences(of: "user: alice", with: "user: alice\nmatch: sometimes"), "match must be"),
        ] {
            let result = unlocked(["edit", id], cli, stdin: edited)
            XCTAssertEqual(result.code, 64, edited)
            XCTAssertTrue(result.stderr.contains(reason) && result.stderr.contains("line "), result.stderr)
        }
        let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["show", id, "--json"], cli).stdout.utf8)) as? [String: Any])
        XCTAssertEqual(shown["user"] as? String, "alice")
        XCTAssertEqual(shown["revision"] as? Int, 1, "nothing was written")
        // A new field is written as such; a card keeps its kind line.
        XCTAssertEqual(unlocked(["edit", id], cli, stdin: text.replacingOccurrences(of: "user: alice", with: "user: alice\nfield usr: typo")).code, 0)
        XCTAssertEqual(unlocked(["add", "--name", "Visa", "--kind", "card"], cli).code, 0)
        let card = unlocked(["show", "Visa"], cli).stdout
        XCTAssertEqual(unlocked(["edit", "Visa"], cli, stdin: card.replacingOccurrences(of: "kind: card\n", with: "")).code, 64, "a card never becomes a login")

        // In the editor: the error is shown, "Edit again?" reopens the text, a no exits 1.
        let script = cli.container + "/../typo-editor.sh"
        try "#!/bin/sh\nsed -i 's/^user: alice$/usre: typo/' \"$1\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        cli.environment["EDITOR"] = script
        let terminal = ScriptedTerminal([CLIHarness.master, "y", "n"])
        let declined = cli.run(["edit", id], terminal: terminal)
        XCTAssertEqual(declined.code, 1, declined.stderr)
        XCTAssertEqual(terminal.prompts.filter { $0.hasPrefix("Edit again?") }.count, 2, "reopened once, then declined")
        XCTAssertTrue(terminal.written.contains("unknown key 'usre'"), terminal.written)
    }

    /// The item changes (another process, a sync) while the editor is open: the person is told
    /// which members changed, and their text is written over it only on a yes (SPEC.md §6.6).
    func testAnItemChangedWhileItWasEditedIsToldNotOverwritten() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "alice", password: "pw")
        let started = cli.container + "/../editor-started", proceed = cli.container + "/../editor-proceed"
        let script = cli.container + "/../slow-editor.sh"
        try """
        #!/bin/sh
        touch "\(started)"
        while [ ! -e "\(proceed)" ]; do sleep 0.02; done
        rm -f "\(proceed)"
        printf 'my note\\n' >> "$1"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        cli.environment["EDITOR"] = script
        for answer in ["n", "y"] {
            unlink(started)
            // While the editor is open, another command changes the password.
            nonisolated(unsafe) let elsewhere = cliCopy(cli)
            let other = Thread {
                while access(started, F_OK) != 0 { usleep(20_000) }
                let changed = elsewhere.run(["edit", id, "--user", "bob-\(answer)", "--password-stdin"], stdin: CLIHarness.master + "\n")
                precondition(changed.code == 0, changed.stderr)
                FileManager.default.createFile(atPath: proceed, contents: nil)
            }
            other.start()
            let terminal = ScriptedTerminal([CLIHarness.master, answer])
            let result = cli.run(["edit", id], terminal: terminal)
            XCTAssertTrue(terminal.written.contains("changed while you edited it") && terminal.written.contains("user"), terminal.written)
            XCTAssertFalse(terminal.written.contains("bob"), "members are named, never their values")
            let shown = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(unlocked(["show", id, "--json"], cli).stdout.utf8)) as? [String: Any])
            if answer == "n" {
                XCTAssertEqual(result.code, 1, result.stderr)
                XCTAssertEqual(shown["user"] as? String, "bob-n", "the other change stands")
                XCTAssertEqual(shown["notes"] as? String, "", "nothing of the stale text was written")
            } else {
                XCTAssertEqual(result.code, 0, result.stderr)
                XCTAssertEqual(shown["notes"] as? String, "my note", "the person's text, written on a yes")
            }
        }
    }

    /// A second harness on the same container (its own in-process run, as another process).
    private func cliCopy(_ cli: CLIHarness) -> CLIHarness {
        let copy = CLIHarness(base: (cli.container as NSString).deletingLastPathComponent)
        copy.environment = cli.environment
        return copy
    }
}
