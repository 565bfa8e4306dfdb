import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// A terminal whose user types the given answers, in order.
final class ScriptedTerminal: Terminal {
    var answers: [String?]
    private(set) var prompts: [String] = []
    private(set) var written = ""

    init(_ answers: [String?]) { self.answers = answers }

    func readSecret(prompt: String) throws -> SecureBytes? {
        prompts.append(prompt)
        guard !answers.isEmpty, let answer = answers.removeFirst() else { return nil }
        return try SecureBytes(copying: Array(answer.utf8))
    }

    func readLine(prompt: String) -> String? {
        prompts.append(prompt)
        return answers.isEmpty ? nil : answers.removeFirst()
    }

    func write(_ text: String) { written += text }
}

struct RunResult {
    let code: Int32
    let stdout: String
    let stderr: String
}

/// Runs the CLI in-process against a container with cheap KDF settings.
final class CLIHarness {
    let container: String
    var environment: Environment
    static let master = "master pw"

    convenience init() {
        self.init(base: ScratchDirectories.make(prefix: "coffer-cli"))
    }

    /// A harness whose container is `base/vault` and device state `base/state`.
    init(base: String) {
        container = base + "/vault"
        environment = ["HOME": base, "XDG_STATE_HOME": base + "/state", "XDG_DATA_HOME": base + "/data"]
    }

    static let configuration = CLIConfiguration(kdfPolicy: .relaxedForTesting, kdfOverride: KDFPolicy.testingParameters)

    @discardableResult
    func run(
        _ arguments: [String], stdin: String = "", terminal: Terminal? = nil, container explicit: Bool = true, stdoutIsTerminal: Bool = false
    ) -> RunResult {
        var out = "", err = ""
        let io = IO(
            standardInput: BufferLineReader(stdin), standardOutput: { out += $0 }, standardError: { err += $0 },
            terminal: terminal, environment: environment, standardOutputIsTerminal: stdoutIsTerminal)
        let code = CommandLineTool.run(arguments + (explicit ? ["--container", container] : []), io: io, configuration: Self.configuration)
        return RunResult(code: code, stdout: out, stderr: err)
    }

    /// `git-credential-coffer` in-process, against this container.
    func runGitHelper(_ arguments: [String], stdin: String) -> RunResult {
        var out = "", err = ""
        let io = IO(standardInput: BufferLineReader(stdin), standardOutput: { out += $0 }, standardError: { err += $0 }, terminal: nil,
                    environment: environment)
        let code = GitCredentialHelper.run(["--container", container] + arguments, io: io, configuration: Self.configuration)
        return RunResult(code: code, stdout: out, stderr: err)
    }

    /// `docker-credential-coffer` in-process, against this container.
    func runDockerHelper(_ arguments: [String], stdin: String) -> RunResult {
        var out = "", err = ""
        let io = IO(standardInput: BufferLineReader(stdin), standardOutput: { out += $0 }, standardError: { err += $0 }, terminal: nil,
                    environment: environment)
        let code = DockerCredentialHelper.run(["--container", container] + arguments, io: io, configuration: Self.configuration)
        return RunResult(code: code, stdout: out, stderr: err)
    }

    /// `init` with the master password on stdin.
    func initVault() {
        let result = run(["init", "--password-stdin"], stdin: Self.master + "\n")
        precondition(result.code == 0, result.stderr)
    }

    /// `add` returning the new id.
    @discardableResult
    func add(_ service: String, _ user: String, password: String) -> String {
        let result = run(["add", service, user, "--password-stdin"], stdin: "\(Self.master)\n\(password)\n")
        precondition(result.code == 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Runs a real program (oathtool, qrencode, gpg, keepassxc-cli, python3) with `stdin`, reading
/// its output and errors to the end; secrets go on stdin, never in `arguments`.
@discardableResult
func runTool(_ path: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil) throws -> RunResult {
    try runProcess(path, arguments, stdin: stdin, environment: environment?.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine })
}

/// Runs `path` with exactly `environment` (the caller's own when `nil`), `stdin` written and
/// closed, then `started` (to signal it, say), and its output and errors read to the end.
@discardableResult
func runProcess(
    _ path: String, _ arguments: [String], stdin: String = "", environment: [String: String]?, started: ((Process) -> Void)? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    started?(process)
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return RunResult(code: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
}

/// A `$PATH` that holds only the basic tools a test names (linked from /usr/bin or /bin), so
/// what else the machine has installed — a real wl-copy or xclip beside a test's fake, `pass`,
/// a launcher — can never change a test's outcome. Put a test's own fakes before it.
enum ControlledPath {
    static let basics = ["sh", "cat", "sleep", "printf", "env", "setsid", "true", "false", "tr", "head"]

    /// A directory of links to `tools` (default: `basics`), made once per set.
    static func directory(_ tools: [String] = basics) -> String {
        let directory = NSTemporaryDirectory() + "coffer-path-" + String(tools.joined(separator: "-").hashValue.magnitude, radix: 36)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for tool in tools where !FileManager.default.fileExists(atPath: directory + "/" + tool) {
            guard let source = ["/usr/bin/", "/bin/"].map({ $0 + tool }).first(where: FileManager.default.isExecutableFile(atPath:)) else { continue }
            try? FileManager.default.createSymbolicLink(atPath: directory + "/" + tool, withDestinationPath: source)
        }
        return directory
    }

    /// `fakes` first, then only the basic tools.
    static func path(fakes: [String] = [], tools: [String] = basics) -> String {
        (fakes + [directory(tools)]).joined(separator: ":")
    }
}

/// A Coffer agent (`coffer ssh-agent`, `coffer agent`) as a test's own child process, its notes
/// on stderr written to `log`: in the foreground, or as systemd's socket activation starts it.
enum AgentProcess {
    static var coffer: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/coffer" }

    /// `coffer ARGUMENTS` in the foreground.
    static func start(_ arguments: [String], environment: [String: String], log: String) throws -> Process {
        try run(coffer, arguments, environment: environment, log: log)
    }

    /// As systemd starts it for a `.socket` unit (`LISTEN_FDS`, descriptor 3): python binds
    /// `socket`, then execs `coffer ARGUMENTS` with the listening socket as descriptor 3.
    static func activated(_ arguments: [String], socket: String, environment: [String: String], log: String) throws -> Process {
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1]); s.listen(8)
            if s.fileno() != 3: os.dup2(s.fileno(), 3)
            os.set_inheritable(3, True)
            os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
            os.execv(sys.argv[2], sys.argv[2:])
            """
        return try run("/usr/bin/python3", ["-c", script, socket, coffer] + arguments, environment: environment, log: log)
    }

    private static func run(_ program: String, _ arguments: [String], environment: [String: String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }
}
