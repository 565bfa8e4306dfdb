import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// Tab in a real interactive shell in a pseudo-terminal (`Tests/Helpers/shell_tab.py`): what a
/// person's line holds after Tab, word by word as a command would receive it.
enum ShellTab {
    enum Shell: String { case bash, zsh, fish }

    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Helpers/shell_tab.py").standardized.path
    }

    /// Writes `coffer completion SHELL` where the shell loads it from (zsh: a `_coffer` in an
    /// fpath directory of its own) and returns its path.
    static func script(_ shell: Shell, cli: CLIHarness) throws -> String {
        let directory = cli.container + "/../completion-\(shell)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + (shell == .zsh ? "/_coffer" : "/coffer.\(shell)")
        try cli.run(["completion", shell.rawValue]).stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Types each of `lines` in one `shell`, pressing Tab `tabs` times after each, and returns
    /// each line's words.
    static func press(_ shell: Shell, typing lines: [String], tabs: Int = 1, cli: CLIHarness, environment: [String: String]) throws -> [[String]] {
        let result = try runTool("/usr/bin/python3", [driver, shell.rawValue, try script(shell, cli: cli), "--tabs", String(tabs)] + lines,
                                 environment: environment)
        XCTAssertEqual(result.code, 0, result.stderr)
        var answers: [[String]] = [], words: [String] = []
        for line in result.stdout.split(separator: "\n") {
            if line == "--" { answers.append(words); words = [] } else { words.append(String(line)) }
        }
        return answers
    }

    static func press(_ shell: Shell, typing line: String, tabs: Int = 1, cli: CLIHarness, environment: [String: String]) throws -> [String] {
        try press(shell, typing: [line], tabs: tabs, cli: cli, environment: environment).first ?? []
    }
}

/// Completion as a person meets it (issue 49, item 3): Tab inserts a name with spaces or shell
/// specials quoted, in bash, zsh and fish alike; `fill` offers the host of a login saved as a
/// URL; `sync`, `team` and `coffer://` references complete.
final class CompletionTests: XCTestCase {
    func testTabQuotesNamesAndCompletesHostsSubcommandsAndReferences() throws {
        let cli = CLIHarness()
        let binDirectory = (EndToEndTests.binary as NSString).deletingLastPathComponent
        var environment = ["PATH": binDirectory + ":/usr/bin:/bin", "COFFER_CONTAINER": cli.container, "COFFER_AGENT": "off"]
        for name in ["HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"] { environment[name] = cli.environment[name] }
        let master = CLIHarness.master + "\n"
        for arguments in [["init", "--kdf", "interactive"], ["add", "--name", "My Bank", "mybank.example", "alice"],
                          ["add", "--name", "Bob's $HOME & (co)", "--kind", "note"], ["add", "https://gitlab.com/users/sign_in", "bob"]] {
            let result = try runTool(EndToEndTests.binary, arguments + ["--password-stdin"], stdin: master + "pw\n", environment: environment)
            XCTAssertEqual(result.code, 0, result.stderr)
        }
        let expected: [(typed: String, words: [String], why: String)] = [
            ("coffer show My", ["coffer", "show", "My Bank"], "one word, quoted"),
            ("coffer show Bob", ["coffer", "show", "Bob's $HOME & (co)"], "shell specials quoted"),
            ("coffer fill gitl", ["coffer", "fill", "gitlab.com"], "the host of a URL login"),
            ("coffer sync st", ["coffer", "sync", "status"], "a subcommand"),
            ("coffer team le", ["coffer", "team", "leave"], "a subcommand"),
            ("coffer run --env T=coffer://My", ["coffer", "run", "--env", "T=coffer://My Bank"], "a reference"),
        ]
        for shell in [ShellTab.Shell.bash, .zsh, .fish] where FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)") {
            let lines = try ShellTab.press(shell, typing: expected.map(\.typed), cli: cli, environment: environment)
            XCTAssertEqual(lines.count, expected.count, "\(shell)")
            for (line, case_) in zip(lines, expected) { XCTAssertEqual(line, case_.words, "\(shell): \(case_.why)") }
        }
        // bash: a word already quoted or escaped goes on as it was typed.
        XCTAssertEqual(try ShellTab.press(.bash, typing: ["coffer show 'My", "coffer show My\\ B"], cli: cli, environment: environment),
                       [["coffer", "show", "My Bank"], ["coffer", "show", "My Bank"]])
        // What Tab offers resolves: the candidates name entries `show` finds.
        let offered = try runTool(EndToEndTests.binary, ["__complete", "entry", ""], environment: environment).stdout
        for candidate in offered.split(separator: "\n") {
            let shown = try runTool(EndToEndTests.binary, ["show", String(candidate), "--password-stdin"], stdin: master, environment: environment)
            XCTAssertEqual(shown.code, 0, "'\(candidate)' is offered but does not resolve: \(shown.stderr)")
        }
    }

    /// The completion table offers only what resolves (issue 51, item 5): a Secret Service
    /// item is offered by its name, never by its collection (`login`, `work_keys`), which no
    /// ENTRY names; `coffer show` of what is offered finds the item.
    func testASecretServiceItemIsOfferedByItsNameNotItsCollection() throws {
        let cli = CLIHarness()
        let environment = ["HOME": cli.environment["HOME"]!, "XDG_STATE_HOME": cli.environment["XDG_STATE_HOME"]!,
                           "XDG_DATA_HOME": cli.environment["XDG_DATA_HOME"]!, "COFFER_CONTAINER": cli.container, "COFFER_AGENT": "off"]
        // The real binary makes the vault: it opens only a vault of the standard KDF range.
        let master = CLIHarness.master + "\n"
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["init", "--kdf", "interactive", "--password-stdin"], stdin: master, environment: environment).code, 0)
        let record = #"[{"created":"2026-12-04T12:00:00Z","id":"00112233445566778899aabbccddeeff","kind":"secret","modified":"2026-12-04T12:00:00Z","name":"IMAP password","notes":"","password":"hunter2","revision":1,"secretService":{"attributes":{"service":"imap.example.com"},"collection":"work_keys"},"serviceIdentifiers":[],"user":""}]"#
        let file = cli.container + "-secret.json"
        try record.write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["import", file, "--password-stdin"], stdin: master, environment: environment).code, 0)
        func offered(_ word: String) throws -> [String] {
            let result = try runTool(EndToEndTests.binary, ["__complete", "entry", word], environment: environment)
            XCTAssertEqual(result.stderr, "")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(try offered("work"), [], "the collection is no candidate")
        XCTAssertEqual(try offered(""), ["IMAP password"])
        let shown = try runTool(EndToEndTests.binary, ["show", "IMAP password", "--password-stdin"], stdin: master, environment: environment)
        XCTAssertEqual(shown.code, 0, "what is offered resolves: " + shown.stderr)
    }
}
