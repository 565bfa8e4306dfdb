import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// Prompts through a real pseudo-terminal: what the user sees, and that secrets are not echoed.
final class PseudoTerminalTests: XCTestCase {
    var home = ""

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-pty-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: home) }

    /// Runs `coffer arguments` with a pseudo-terminal as its controlling terminal, typing
    /// `answers` at its prompts; with `stdin`, that text is its standard input (a pipe into a
    /// command run at a terminal). A run past `deadline` is killed (exit 124).
    func drive(
        _ arguments: [String], answers: [String], stdin: String? = nil, deadline: Int = 30, environment: [String: String] = [:]
    ) throws -> (code: Int32, transcript: String) {
        let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Helpers/pty_drive.py").standardized.path
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/coffer"
        let transcriptPath = home + "/transcript-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var options = ["--deadline", String(deadline)]
        if let stdin {
            let path = home + "/stdin-\(UUID().uuidString)"
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: path))
            options += ["--stdin", path]
        }
        process.arguments = ["python3", driver] + options + [transcriptPath, binary] + arguments + ["--container", home + "/vault"]
        process.environment = ["HOME": home, "XDG_STATE_HOME": home + "/state", "PATH": "/usr/bin:/bin", "TERM": "dumb"].merging(environment) { $1 }
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data(answers.map { $0 + "\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let transcript = (try? String(contentsOfFile: transcriptPath, encoding: .utf8)) ?? ""
        return (process.terminationStatus, transcript)
    }

    func testPasswordsAreNotEchoedAndMismatchesAreRefused() throws {
        let mismatch = try drive(["init", "--kdf", "interactive"], answers: ["FirstSecret1", "OtherSecret2"])
        XCTAssertEqual(mismatch.code, 64, mismatch.transcript)
        XCTAssertTrue(mismatch.transcript.contains("New master password: "), mismatch.transcript)
        XCTAssertTrue(mismatch.transcript.contains("do not match"), mismatch.transcript)
        XCTAssertFalse(mismatch.transcript.contains("FirstSecret1"), "echoed: \(mismatch.transcript)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/vault/vault.coffer"))

        let created = try drive(["init", "--kdf", "interactive"], answers: ["MasterSecret9", "MasterSecret9"])
        XCTAssertEqual(created.code, 0, created.transcript)
        XCTAssertFalse(created.transcript.contains("MasterSecret9"))

        let added = try drive(["add", "example.com", "alice"], answers: ["MasterSecret9", "SitePassword7", "SitePassword7"])
        XCTAssertEqual(added.code, 0, added.transcript)
        XCTAssertTrue(added.transcript.contains("Password for example.com: "))
        XCTAssertFalse(added.transcript.contains("SitePassword7") || added.transcript.contains("MasterSecret9"))

        // fill on a terminal: locked, so the interactive path asks for the master password.
        let filled = try drive(["fill", "example.com"], answers: ["MasterSecret9"])
        XCTAssertEqual(filled.code, 0, filled.transcript)
        XCTAssertTrue(filled.transcript.contains("SitePassword7"), "the password is printed on stdout: \(filled.transcript)")
        XCTAssertFalse(filled.transcript.contains("MasterSecret9"))
    }

    /// A person at a terminal piping the master password and the item's values into a command
    /// (`scripts/demo` does): every value comes from the pipe, none is asked on the terminal
    /// (issue 49, item 1). Before, `add` asked "Password for site:" there and waited forever.
    func testPipedValuesAreReadFromStdinAtATerminal() throws {
        XCTAssertEqual(try drive(["init", "--kdf", "interactive", "--password-stdin"], answers: [], stdin: "MasterSecret9\n").code, 0)
        let added = try drive(["add", "site.example", "alice", "--password-stdin"], answers: [], stdin: "MasterSecret9\nSitePassword7\n", deadline: 15)
        XCTAssertEqual(added.code, 0, added.transcript)
        XCTAssertFalse(added.transcript.contains("Password for"), added.transcript)
        let otp = "otpauth://totp/site:alice?secret=JBSWY3DPEHPK3PXP"
        let edited = try drive(["edit", "site.example", "--otp", "--password-stdin"], answers: [], stdin: "MasterSecret9\n\(otp)\n", deadline: 15)
        XCTAssertEqual(edited.code, 0, edited.transcript)
        XCTAssertFalse(edited.transcript.contains("One-time code"), edited.transcript)
        let filled = try drive(["fill", "site.example", "--password-stdin"], answers: [], stdin: "MasterSecret9\n", deadline: 15)
        XCTAssertTrue(filled.transcript.contains("SitePassword7"), filled.transcript)
    }

    /// Quick unlock as a person uses it (issue 55, SPEC.md §8.6): the PIN is set after the master
    /// password, the unlock prompt then takes the PIN, three wrong ones end it with a word why,
    /// and the master password still opens the vault.
    func testAPINUnlocksAtTheTerminalUntilThreeWrongOnesEndIt() throws {
        XCTAssertEqual(try drive(["init", "--kdf", "interactive", "--password-stdin"], answers: [], stdin: "MasterSecret9\n").code, 0)
        defer { _ = try? drive(["quick-unlock", "disable"], answers: []) }
        let refused = try drive(["quick-unlock", "enable", "--pin"], answers: ["WrongSecret", "WrongSecret", "WrongSecret"])
        XCTAssertEqual(refused.code, 77, "the master password first: \(refused.transcript)")
        let enabled = try drive(["quick-unlock", "enable", "--pin"], answers: ["MasterSecret9", "4711", "4711"])
        XCTAssertEqual(enabled.code, 0, enabled.transcript)
        XCTAssertTrue(enabled.transcript.contains("New PIN: "), enabled.transcript)
        XCTAssertFalse(enabled.transcript.contains("4711"), "echoed: \(enabled.transcript)")
        XCTAssertTrue(try drive(["status"], answers: []).transcript.contains("PIN, until the machine restarts, 3 attempts left"))

        let unlocked = try drive(["unlock", "--no-agent", "--timeout", "1m"], answers: ["4711"])
        XCTAssertEqual(unlocked.code, 0, unlocked.transcript)
        XCTAssertTrue(unlocked.transcript.contains("PIN or master password"), unlocked.transcript)
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)

        let wrong = try drive(["unlock", "--no-agent"], answers: ["1111", "2222", "3333"])
        XCTAssertEqual(wrong.code, 77, wrong.transcript)
        XCTAssertTrue(wrong.transcript.contains("three wrong PINs"), wrong.transcript)
        XCTAssertTrue(try drive(["quick-unlock", "status"], answers: []).transcript.contains("quick unlock: off"))
        let master = try drive(["unlock", "--no-agent"], answers: ["MasterSecret9"])
        XCTAssertEqual(master.code, 0, master.transcript)
        XCTAssertTrue(master.transcript.contains("Master password ("), "a plain master password prompt again: \(master.transcript)")
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)
    }

    /// Quick unlock by the TPM (SPEC.md §8.6.1) against a software TPM: with a PIN, the prompt
    /// takes the PIN or the master password; without, Enter on an empty line is the person's yes.
    func testTheTPMUnlocksAtTheTerminalWithAPINOrAnEmptyAnswer() throws {
        guard let machine = try SoftwareTPM() else { throw XCTSkip("swtpm is not installed (scripts/test installs it)") }
        let tpm = ["COFFER_TPM_TCTI": machine.tcti]
        XCTAssertEqual(try drive(["init", "--kdf", "interactive", "--password-stdin"], answers: [], stdin: "MasterSecret9\n").code, 0)
        let enabled = try drive(["quick-unlock", "enable", "--tpm", "--pin"], answers: ["MasterSecret9", "4711", "4711"], environment: tpm)
        XCTAssertEqual(enabled.code, 0, enabled.transcript)
        XCTAssertTrue(enabled.transcript.contains("the TPM and the PIN opens this vault on this device for 14d"), enabled.transcript)
        XCTAssertTrue(try drive(["status"], answers: []).transcript.contains("TPM and PIN, until"))

        let unlocked = try drive(["unlock", "--no-agent", "--timeout", "1m"], answers: ["4711"], environment: tpm)
        XCTAssertEqual(unlocked.code, 0, unlocked.transcript)
        XCTAssertTrue(unlocked.transcript.contains("PIN or master password"), unlocked.transcript)
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)
        let master = try drive(["unlock", "--no-agent", "--timeout", "1m"], answers: ["MasterSecret9"], environment: tpm)
        XCTAssertEqual(master.code, 0, "the master password at the same prompt: \(master.transcript)")
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)

        let noTPM = try drive(["unlock", "--no-agent", "--timeout", "1m"], answers: ["4711", "MasterSecret9"], environment: ["COFFER_TPM_TCTI": "device:/nonexistent"])
        XCTAssertEqual(noTPM.code, 0, noTPM.transcript)
        XCTAssertTrue(noTPM.transcript.contains("needs the TPM, which is unavailable"), noTPM.transcript)
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)

        XCTAssertEqual(try drive(["quick-unlock", "enable", "--tpm"], answers: ["MasterSecret9"], environment: tpm).code, 0)
        let present = try drive(["unlock", "--no-agent", "--timeout", "1m"], answers: [""], environment: tpm)
        XCTAssertEqual(present.code, 0, present.transcript)
        XCTAssertTrue(present.transcript.contains("Enter to unlock with the TPM, or the master password"), present.transcript)
        XCTAssertEqual(try drive(["lock"], answers: []).code, 0)
        XCTAssertEqual(try drive(["quick-unlock", "disable"], answers: []).code, 0)
        XCTAssertTrue(try drive(["quick-unlock", "status"], answers: []).transcript.contains("quick unlock: off"))
    }
}

final class MoreCommandTests: XCTestCase {
    func testEditChangesOnlyWhatIsNamed() throws {
        let cli = CLIHarness()
        cli.initVault()
        let id = cli.add("example.com", "alice", password: "old")
        XCTAssertEqual(cli.run(["edit", id, "--password-stdin"], stdin: CLIHarness.master + "\n").code, 64, "nothing to change")
        let edit = cli.run(["edit", id, "--user", "alice2", "--add-service", "https://login.example.org", "--new-password", "--password-stdin"],
                           stdin: "\(CLIHarness.master)\nnewpw\n")
        XCTAssertEqual(edit.code, 0, edit.stderr)
        let show = cli.run(["show", id, "--json", "--password-stdin"], stdin: CLIHarness.master + "\n")
        let object = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["user"] as? String, "alice2")
        XCTAssertEqual(object?["password"] as? String, "newpw")
        XCTAssertEqual(object?["revision"] as? Int, 2)
        XCTAssertEqual((object?["serviceIdentifiers"] as? [Any])?.count, 2)
        XCTAssertTrue(cli.run(["list", "https://login.example.org/x"]).stdout.contains("alice2"), "the identity store follows")
        XCTAssertEqual(cli.run(["edit", id, "--remove-service", "nope.example", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 64)
        let generated = cli.run(["edit", id, "--generate=40", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(generated.code, 0)
        let after = cli.run(["show", id, "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(after.stdout.split(separator: "\n").first?.count, 40)
    }

    func testPassphrases() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/dict/words") else {
            return XCTFail("/usr/share/dict/words is missing; scripts/install-deps installs wamerican")
        }
        let cli = CLIHarness()
        let result = cli.run(["generate", "--style", "words", "--length", "5", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let words = (object?["password"] as? String)?.split(separator: "-") ?? []
        XCTAssertEqual(words.count, 5)
        XCTAssertTrue(words.allSatisfy { (4...8).contains($0.count) && $0.allSatisfy(\.isLowercase) })
        XCTAssertGreaterThan(object?["entropyBits"] as? Double ?? 0, 70)
        XCTAssertThrowsError(try PasswordGenerator.passphrase(words: 6, from: ["a", "b"]))
    }

    func testCompletionsAndManPageComeFromTheCommandTable() throws {
        let cli = CLIHarness()
        let bash = cli.run(["completion", "bash"]).stdout
        for command in CommandLineTool.commands { XCTAssertTrue(bash.contains(command.name), command.name) }
        XCTAssertTrue(bash.contains("--no-interaction"))
        XCTAssertTrue(cli.run(["completion", "zsh"]).stdout.hasPrefix("#compdef coffer"))
        XCTAssertTrue(cli.run(["completion", "fish"]).stdout.contains("complete -c coffer"))
        XCTAssertEqual(cli.run(["completion", "tcsh"]).code, 64)
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/coffer.1").standardized
        XCTAssertEqual(try String(contentsOf: shipped, encoding: .utf8), cli.run(["help", "--man"]).stdout,
                       "docs/coffer.1 is stale: regenerate it with 'coffer help --man > docs/coffer.1'")
    }

    func testClipboardGetsThePasswordThroughAPipeAndIsRestoredUnlessReplaced() throws {
        let cli = CLIHarness()
        cli.initVault()
        _ = cli.add("example.com", "alice", password: "ClipSecret")
        let argv = cli.container + "-argv"
        /// A fake xclip whose clipboard is a file; `-o` prints it, anything else replaces it.
        func fakeClipboard(_ name: String) throws -> (environment: Environment, file: String) {
            let bin = cli.container + "-bin-" + name, clip = cli.container + "-clipboard-" + name
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try "#!/bin/sh\necho \"$@\" >> '\(argv)'\ncase \"$*\" in *-o*) cat '\(clip)' ;; *) cat > '\(clip)' ;; esac\n"
                .write(toFile: bin + "/xclip", atomically: true, encoding: .utf8)
            chmod(bin + "/xclip", 0o755)
            var environment = cli.environment
            environment["PATH"] = ControlledPath.path(fakes: [bin])  // a real wl-copy or xclip never answers instead
            environment["DISPLAY"] = ":99"
            environment["WAYLAND_DISPLAY"] = nil
            environment["COFFER_CLIP_TIME"] = "2"
            return (environment, clip)
        }
        func fillClip(_ environment: Environment) -> (code: Int32, out: String, err: String) {
            var out = "", err = ""
            let io = IO(standardInput: BufferLineReader(CLIHarness.master + "\n"), standardOutput: { out += $0 },
                        standardError: { err += $0 }, terminal: nil, environment: environment)
            let code = CommandLineTool.run(["fill", "example.com", "--clip", "--password-stdin", "--container", cli.container], io: io,
                                           configuration: CLIHarness.configuration)
            return (code, out, err)
        }
        let untouched = try fakeClipboard("untouched"), replaced = try fakeClipboard("replaced")
        try "what was there before".write(toFile: untouched.file, atomically: true, encoding: .utf8)
        let first = fillClip(untouched.environment)
        XCTAssertEqual(first.code, 0, first.err)
        XCTAssertFalse(first.out.contains("ClipSecret"), "--clip prints nothing on stdout")
        // Still there when fill returns: the clear runs detached, it does not hold fill up.
        // (No wall-clock bound: the kind of assertion a loaded machine breaks.)
        XCTAssertEqual(try String(contentsOfFile: untouched.file, encoding: .utf8), "ClipSecret")
        XCTAssertEqual(fillClip(replaced.environment).code, 0)
        try "copied by the user meanwhile".write(toFile: replaced.file, atomically: true, encoding: .utf8)

        var restored = false
        for _ in 0..<80 where !restored {
            Thread.sleep(forTimeInterval: 0.1)
            restored = (try? String(contentsOfFile: untouched.file, encoding: .utf8)) == "what was there before"
        }
        XCTAssertTrue(restored, "after COFFER_CLIP_TIME the clipboard holds what it held before, as pass does")
        Thread.sleep(forTimeInterval: 1.5)  // the second clear was due at most a moment after the first
        XCTAssertEqual(try String(contentsOfFile: replaced.file, encoding: .utf8), "copied by the user meanwhile",
                       "what the user copied since is left alone")
        XCTAssertFalse(try String(contentsOfFile: argv, encoding: .utf8).contains("ClipSecret"), "never on argv")

        var err = ""
        var noClipboard = cli.environment
        noClipboard["PATH"] = "/nonexistent"
        let io2 = IO(standardInput: BufferLineReader(CLIHarness.master + "\n"), standardOutput: { _ in }, standardError: { err = $0 },
                     terminal: nil, environment: noClipboard)
        XCTAssertEqual(CommandLineTool.run(["fill", "example.com", "--clip", "--password-stdin", "--container", cli.container], io: io2,
                                           configuration: CLIHarness.configuration), 69, "EX_UNAVAILABLE")
        XCTAssertTrue(err.contains("no clipboard"), err)

        var noDisplay = untouched.environment
        noDisplay["DISPLAY"] = nil
        let io3 = IO(standardInput: BufferLineReader(CLIHarness.master + "\n"), standardOutput: { _ in }, standardError: { err = $0 },
                     terminal: nil, environment: noDisplay)
        XCTAssertEqual(CommandLineTool.run(["fill", "example.com", "--clip", "--password-stdin", "--container", cli.container], io: io3,
                                           configuration: CLIHarness.configuration), 69, "EX_UNAVAILABLE")
        XCTAssertTrue(err.contains("xclip is installed but there is no display"), err)
    }
}

/// The progress line: nothing for a step done within a quarter second, a line (then cleared)
/// for a longer one, nothing at all when stderr is not a terminal or with --json.
final class ProgressLineTests: XCTestCase {
    func drawn(terminal: Bool, enabled: Bool = true, lasting seconds: Double, counts: Bool = false) -> String {
        var written = ""
        let lock = NSLock()
        let io = IO(standardInput: BufferLineReader(""), standardOutput: { _ in }, standardError: { text in lock.withLock { written += text } },
                    terminal: nil, environment: [:], standardErrorIsTerminal: terminal)
        let progress = ProgressLine(io: io, label: "deriving the key (Argon2id, 1 GiB)", enabled: enabled)
        if counts { progress.update(3, of: 10) }
        Thread.sleep(forTimeInterval: seconds)
        progress.finish()
        return lock.withLock { written }
    }

    func testDrawnOnlyForLongStepsOnATerminal() {
        XCTAssertEqual(drawn(terminal: true, lasting: 0.05), "", "under a quarter second: nothing")
        let long = drawn(terminal: true, lasting: 0.6)
        XCTAssertTrue(long.hasPrefix("\rderiving the key (Argon2id, 1 GiB)…"), long)
        XCTAssertTrue(long.hasSuffix("\r\u{1B}[K"), "cleared when done")
        XCTAssertTrue(drawn(terminal: true, lasting: 0.6, counts: true).contains("3/10"))
        XCTAssertEqual(drawn(terminal: false, lasting: 0.6), "", "never into a pipe")
        XCTAssertEqual(drawn(terminal: true, enabled: false, lasting: 0.6), "", "never with --json")
    }
}
