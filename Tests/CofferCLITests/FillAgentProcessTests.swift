import Foundation
import XCTest

/// The fill agent (SPEC.md §8.5) as a person meets it: `coffer unlock` starts it, `coffer fill`
/// goes through it, `coffer lock` ends it — the real `coffer` binary in separate processes, a
/// real socket, and a hostile client in Python.
final class FillAgentProcessTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }
    var home = ""
    var socket: String { home + "/run/coffer/agent.sock" }
    var environment: [String: String] = [:]
    let master = "fill agent master"
    var agent: Process?
    var agentLog: String { (try? String(contentsOfFile: home + "/agent.log", encoding: .utf8)) ?? "" }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-fill-agent-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment = [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_RUNTIME_DIR": home + "/run", "COFFER_CONTAINER": home + "/vault",
            "PATH": ControlledPath.path(),
        ]
        XCTAssertEqual(try coffer(["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
        let added = try coffer(["add", "github.com", "alice", "--otp", "--password-stdin"], stdin: master + "\nS3cret-alice\nJBSWY3DPEHPK3PXP\n")
        XCTAssertEqual(added.code, 0, added.stderr)
        XCTAssertEqual(try coffer(["add", "accounts.example.com", "bob", "--password-stdin"], stdin: master + "\nS3cret-bob\n").code, 0)
    }

    override func tearDown() {
        agent?.terminate()
        agent?.waitUntilExit()
        _ = try? coffer(["lock"])
        for pid in agentProcesses() { kill(pid, SIGTERM) }
        try? FileManager.default.removeItem(atPath: home)
    }

    func coffer(_ arguments: [String], stdin: String = "", extra: [String: String] = [:]) throws -> RunResult {
        try runProcess(Self.products + "/coffer", arguments, stdin: stdin, environment: environment.merging(extra) { $1 })
    }

    /// `coffer agent` in the foreground with its notes in agent.log (as under systemd).
    func startAgent(_ extra: [String] = []) throws {
        agent = try AgentProcess.start(["agent"] + extra, environment: environment, log: home + "/agent.log")
        XCTAssertTrue(waitFor { FileManager.default.fileExists(atPath: self.socket) }, agentLog)
    }

    /// The agents serving this test's socket, found by their command lines.
    func agentProcesses() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.count > 1 && words[1] == "agent" && words.contains(socket) ? pid : nil
        }
    }

    func waitFor(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    func answeredFills() -> Int { agentLog.components(separatedBy: "answered a fill").count - 1 }

    func testUnlockStartsTheAgentAndLockEndsIt() throws {
        let unlocked = try coffer(["unlock", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(unlocked.code, 0, unlocked.stderr)
        XCTAssertEqual(agentProcesses().count, 1, "unlock started one agent")
        XCTAssertTrue(try coffer(["status"]).stdout.contains("agent:    the fill agent answers on \(socket)"))
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertEqual(agentProcesses().count, 1, "a second unlock finds it running")
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        XCTAssertTrue(waitFor { self.agentProcesses().isEmpty }, "lock ends the agent")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "its socket goes with it")
        XCTAssertTrue(try coffer(["status", "--json"]).stdout.contains("\"fillAgent\":false"))
        let locked = try coffer(["fill", "github.com", "--no-interaction"])
        XCTAssertEqual(locked.code, 75)
        XCTAssertEqual(locked.stdout, "")

        XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n", extra: ["COFFER_AGENT": "off"]).code, 0)
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertTrue(agentProcesses().isEmpty, "COFFER_AGENT=off and --no-agent start none")
    }

    func testFillsThroughTheAgentAnswerAsTheCommandDoes() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        try startAgent()
        let requests: [[String]] = [
            ["fill", "github.com"], ["fill", "https://github.com/login", "--json"], ["fill", "accounts.example.com", "--user", "bob", "--json"],
            ["fill", "GitHub.com", "--user", "alice"],
        ]
        for request in requests {
            let direct = try coffer(request, extra: ["COFFER_AGENT": "off"])
            let before = answeredFills()
            let through = try coffer(request)
            XCTAssertEqual(through.code, 0, through.stderr)
            XCTAssertEqual(through.stdout, direct.stdout, "\(request)")
            XCTAssertEqual(answeredFills(), before + 1, "\(request): \(agentLog)")
        }
        var code = try coffer(["fill", "github.com", "--otp"])
        if code.stdout != (try coffer(["fill", "github.com", "--otp"], extra: ["COFFER_AGENT": "off"])).stdout {
            code = try coffer(["fill", "github.com", "--otp"])  // a 30-second step passed between the two
        }
        XCTAssertEqual(code.stdout.count, 7, code.stdout)
        XCTAssertTrue(agentLog.contains("answered a fill"))

        // What needs this process — a choice, no match, a person to ask — is declined and done here.
        let before = answeredFills()
        let sibling = try coffer(["fill", "mail.example.com", "--no-interaction"])
        XCTAssertEqual(sibling.code, 66, sibling.stderr)
        XCTAssertTrue(sibling.stderr.contains("another host of the same site"), sibling.stderr)
        XCTAssertEqual(try coffer(["fill", "example.org"]).code, 66)
        XCTAssertEqual(answeredFills(), before)
        XCTAssertTrue(agentLog.contains("declined a fill: a person must choose") && agentLog.contains("declined a fill: no match"), agentLog)
        XCTAssertFalse(agentLog.contains("S3cret") || agentLog.contains("alice") || agentLog.contains("github"), agentLog)

        // A supplied master password is read and checked in this run, never skipped via the agent.
        let wrong = try coffer(["fill", "github.com", "--password-stdin"], stdin: "not the master\n")
        XCTAssertEqual(wrong.code, 77, wrong.stderr)
        XCTAssertEqual(wrong.stdout, "")
    }

    func testLockedMeansLockedThroughTheAgent() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        try startAgent(["--check-every", "60"])
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        let locked = try coffer(["fill", "github.com", "--no-interaction"])
        XCTAssertEqual(locked.code, 75, locked.stderr)
        XCTAssertEqual(locked.stdout, "")
        XCTAssertTrue(waitFor { self.agent?.isRunning == false }, "lock's check ends it at once, not after 60 s")
        XCTAssertTrue(agentLog.contains("no unlock session left to serve"), agentLog)
    }

    func testAFillStartsTheAgentWhenASessionLivesWithoutOne() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertTrue(agentProcesses().isEmpty)
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertTrue(waitFor { self.agentProcesses().count == 1 }, "a fill from a live session starts one for the next fill")
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertEqual(agentProcesses().count, 1)
    }

    func testAHostileClientGetsNothingAndTheAgentServesOn() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        try startAgent()
        let script = """
            import socket, struct, sys
            path = sys.argv[1]
            def ask(data, read=True):
                c = socket.socket(socket.AF_UNIX); c.connect(path); c.sendall(data)
                if not read:
                    c.close(); return b''
                answer = b''
                while True:
                    chunk = c.recv(65536)
                    if not chunk: break
                    answer += chunk
                    if len(answer) >= 4 and len(answer) >= 4 + struct.unpack('>I', answer[:4])[0]: break
                c.close(); return answer
            def frame(body): return struct.pack('>I', len(body)) + body
            def string(text): return frame(text.encode())
            print(ask(frame(b'\\x01garbage'))[4:5].hex())               # malformed: declined
            print(ask(struct.pack('>I', 0xffffffff) + b'x')[4:5].hex())  # impossible length: declined, closed
            ask(struct.pack('>I', 100) + b'\\x01', read=False)           # cut short: dropped
            env = struct.pack('>I', 1) + string('PATH') + string('/tmp/evil')
            body = b'\\x01' + string(sys.argv[2]) + string(sys.argv[3]) + env + string('github.com') + b'\\x00\\x00'
            print(ask(frame(body))[4:5].hex())                           # a variable the agent never takes
            body = b'\\x01' + string(sys.argv[2]) + string('vault') + struct.pack('>I', 0) + string('github.com') + b'\\x00\\x00'
            print(ask(frame(body))[4:5].hex())                           # a relative container
            """
        let version = try coffer(["--version"]).stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let hostile = try runTool("/usr/bin/python3", ["-c", script, socket, version, home + "/vault"])
        XCTAssertEqual(hostile.code, 0, hostile.stderr)
        XCTAssertEqual(hostile.stdout, "02\n02\n02\n02\n", "declined every time, nothing handed out")
        XCTAssertEqual(answeredFills(), 0)
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertEqual(answeredFills(), 1, "the agent serves on: \(agentLog)")
    }

    /// systemd's socket activation, as contrib/systemd/coffer-agent.socket uses it, on the socket
    /// where `coffer fill` looks.
    func testServesTheSocketSystemdPasses() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        try FileManager.default.createDirectory(atPath: home + "/run/coffer", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let process = try AgentProcess.activated(["agent"], socket: socket, environment: environment, log: home + "/agent.log")
        agent = process
        XCTAssertTrue(waitFor { self.agentLog.contains("listening on the socket systemd passed") }, agentLog)
        XCTAssertEqual(try coffer(["fill", "github.com"]).stdout, "S3cret-alice\n")
        XCTAssertEqual(answeredFills(), 1, agentLog)
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        XCTAssertTrue(waitFor { process.isRunning == false }, "it ends with the session it served; systemd would start it again")
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "the socket is systemd's to remove")
    }

    /// The agent is an optimisation: one that never answers, answers nonsense or never takes
    /// the connection (a full backlog) costs a fill its timeout at most, and the fill is done
    /// here with the same result.
    func testAFillPassesByAnAgentThatHangsOrTalksNonsense() throws {
        XCTAssertEqual(try coffer(["unlock", "--no-agent", "--password-stdin"], stdin: master + "\n").code, 0)
        try FileManager.default.createDirectory(atPath: home + "/run/coffer", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for behaviour in ["hang", "nonsense", "full", "trickle"] {
            let script = """
                import socket, struct, sys, threading, time
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(0 if sys.argv[2] == "full" else 8)
                waiting = []
                while sys.argv[2] == "full":  # connections nobody accepts, until the backlog is full
                    c = socket.socket(socket.AF_UNIX); c.setblocking(False)
                    try: c.connect(sys.argv[1])
                    except BlockingIOError: break
                    waiting.append(c)
                print("ready", flush=True)
                if sys.argv[2] == "full": time.sleep(60)
                def serve(c):
                    c.recv(65536)
                    if sys.argv[2] == "nonsense": c.sendall(struct.pack('>I', 3) + b'\\x07zz'); c.close()
                    elif sys.argv[2] == "trickle":  # announces 12 bytes, then one every 1.5 s
                        c.sendall(struct.pack('>I', 12))
                        for _ in range(12): time.sleep(1.5); c.sendall(b'z')
                    else: time.sleep(30)
                count = 0
                while True:
                    c, _ = s.accept(); count += 1
                    open(sys.argv[3], 'w').write(str(count))
                    threading.Thread(target=serve, args=(c,), daemon=True).start()
                """
            let fake = Process()
            fake.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            fake.arguments = ["-c", script, socket, behaviour, home + "/connections"]
            let ready = Pipe()
            fake.standardOutput = ready
            try fake.run()
            _ = ready.fileHandleForReading.availableData
            let started = Date()
            let filled = try coffer(["fill", "github.com"])
            XCTAssertEqual(filled.stdout, "S3cret-alice\n", "\(behaviour): \(filled.stderr)")
            // The agent's deadline is for its whole answer (SPEC.md §8.5): 2 s, then the fill's own.
            XCTAssertLessThan(Date().timeIntervalSince(started), behaviour == "trickle" ? 5 : 10, behaviour)
            usleep(300_000)
            if behaviour == "full" {
                XCTAssertEqual(agentProcesses(), [], "a listener that takes no connection is there, not absent: no agent is started beside it")
                // status (and unlock, and an agent's bind) probe the socket: at once, not for ever.
                let status = Process()
                status.executableURL = URL(fileURLWithPath: Self.products + "/coffer")
                status.arguments = ["status", "--json"]
                status.environment = environment
                let output = Pipe()
                status.standardOutput = output
                try status.run()
                let ended = waitFor(seconds: 10) { !status.isRunning }
                if !ended { status.terminate() }
                XCTAssertTrue(ended, "coffer status waited on a full backlog")
                let json = try JSONSerialization.jsonObject(with: output.fileHandleForReading.readDataToEndOfFile()) as? [String: Any]
                XCTAssertEqual(json?["fillAgent"] as? Bool, true, "something listens there")
            } else {
                XCTAssertEqual(try String(contentsOfFile: home + "/connections", encoding: .utf8), "1",
                               "\(behaviour): the fill's own; a listener that is there but no use is passed by, no agent started to probe it")
            }
            fake.terminate()
            fake.waitUntilExit()
            try? FileManager.default.removeItem(atPath: socket)
        }
    }
}
