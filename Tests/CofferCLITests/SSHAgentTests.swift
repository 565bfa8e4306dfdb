import Foundation
import XCTest

/// `coffer ssh-agent` and `coffer ssh-key` against the real OpenSSH tools (ssh-add, ssh-keygen
/// -Y sign/verify), with the real `coffer` binary in separate processes as systemd or a shell
/// would start it.
final class SSHAgentTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }
    static let pinentry = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
        + "/Helpers/scripted-pinentry"
    var home = ""
    var socket: String { home + "/run/coffer/ssh-agent.sock" }
    var environment: [String: String] = [:]
    let master = "agent test master"
    var agent: Process?
    var agentLog: String { (try? String(contentsOfFile: home + "/agent.log", encoding: .utf8)) ?? "" }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-agent-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment = [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_RUNTIME_DIR": home + "/run", "COFFER_CONTAINER": home + "/vault",
            "PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": home + "/run/coffer/ssh-agent.sock",
            "COFFER_PINENTRY": Self.pinentry, "SCRIPTED_PINENTRY_ANSWERS": home + "/answers", "SCRIPTED_PINENTRY_LOG": home + "/pinentry.log",
        ]
        XCTAssertEqual(try run(Self.products + "/coffer", ["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
    }

    override func tearDown() {
        agent?.terminate()
        agent?.waitUntilExit()
        _ = try? run(Self.products + "/coffer", ["lock"])
        try? FileManager.default.removeItem(atPath: home)
    }

    @discardableResult
    func run(_ path: String, _ arguments: [String], stdin: String = "", setsid: Bool = true) throws -> RunResult {
        try runProcess(setsid ? "/usr/bin/setsid" : path, (setsid ? ["-w", path] : []) + arguments, stdin: stdin, environment: environment)
    }

    func coffer(_ arguments: [String], stdin: String = "") throws -> RunResult { try run(Self.products + "/coffer", arguments, stdin: stdin) }

    func startAgent(_ extra: [String] = []) throws {
        agent = try AgentProcess.start(["ssh-agent"] + extra, environment: environment, log: home + "/agent.log")
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { usleep(20_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), agentLog)
    }

    /// ssh-keygen -Y sign of `message` with the key in `publicKeyFile` through the agent.
    func sign(_ message: String, with publicKeyFile: String) throws -> RunResult {
        try message.write(toFile: home + "/message", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: home + "/message.sig")
        return try run("/usr/bin/ssh-keygen", ["-Y", "sign", "-f", publicKeyFile, "-n", "file", home + "/message"])
    }

    func testGeneratedKeyIsListedWhileLockedSignsOnlyWhenUnlockedAndVerifies() throws {
        let added = try coffer(["ssh-key", "add", "laptop", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(added.code, 0, added.stderr)
        let publicKey = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(publicKey.hasPrefix("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5") && publicKey.hasSuffix(" laptop"), publicKey)
        XCTAssertEqual(try coffer(["ssh-key", "list"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines), publicKey, "listed while locked")

        try startAgent(["--no-pinentry"])
        let listed = try run("/usr/bin/ssh-add", ["-L"])
        XCTAssertEqual(listed.code, 0, listed.stderr + agentLog)
        XCTAssertEqual(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), publicKey, "ssh-add -L while locked")
        try (publicKey + "\n").write(toFile: home + "/key.pub", atomically: true, encoding: .utf8)

        let locked = try sign("hello", with: home + "/key.pub")
        XCTAssertNotEqual(locked.code, 0, "locked and no pinentry: no signature")
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/message.sig"))
        XCTAssertTrue(agentLog.contains("refused a signature: the vault is locked"), agentLog)

        XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        let signed = try sign("hello", with: home + "/key.pub")
        XCTAssertEqual(signed.code, 0, signed.stderr + agentLog)
        try ("alice " + publicKey + "\n").write(toFile: home + "/allowed", atomically: true, encoding: .utf8)
        let verify = Process()
        verify.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
        verify.arguments = ["-Y", "verify", "-f", home + "/allowed", "-I", "alice", "-n", "file", "-s", home + "/message.sig"]
        verify.standardInput = FileHandle(forReadingAtPath: home + "/message")
        verify.standardOutput = FileHandle.nullDevice
        try verify.run()
        verify.waitUntilExit()
        XCTAssertEqual(verify.terminationStatus, 0, "ssh-keygen -Y verify accepts the agent's signature")

        XCTAssertEqual(try coffer(["lock"]).code, 0)
        XCTAssertNotEqual(try sign("after lock", with: home + "/key.pub").code, 0, "coffer lock locks the agent")
    }

    /// A team's shared key (SPEC.md §16.6) is served beside one's own, named `TEAM:NAME`, signs
    /// while one's vault is unlocked, and not after `coffer lock`.
    func testATeamsKeyIsServedAndSignsWhileOnesVaultIsUnlocked() throws {
        XCTAssertEqual(try coffer(["team", "create", "ops", "--password-stdin"], stdin: master + "\n").code, 0)
        let added = try coffer(["--group", "team.ops", "ssh-key", "add", "deploy", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(added.code, 0, added.stderr)
        let publicKey = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try startAgent(["--no-pinentry"])
        let listed = try run("/usr/bin/ssh-add", ["-L"])
        XCTAssertEqual(listed.code, 0, listed.stderr + agentLog)
        XCTAssertTrue(listed.stdout.contains(String(publicKey.split(separator: " ")[1])), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("ops:deploy"), listed.stdout)
        // `coffer ssh-key list` prints what the agent serves, the team's key included.
        let own = try coffer(["ssh-key", "list"])
        XCTAssertEqual(own.code, 0, own.stderr)
        let keyText = publicKey.split(separator: " ").prefix(2).joined(separator: " ")
        XCTAssertTrue(own.stdout.contains(keyText + " ops:deploy\n"), own.stdout)
        try (publicKey + "\n").write(toFile: home + "/team.pub", atomically: true, encoding: .utf8)
        XCTAssertNotEqual(try sign("locked", with: home + "/team.pub").code, 0)
        XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        let signed = try sign("hello", with: home + "/team.pub")
        XCTAssertEqual(signed.code, 0, signed.stderr + agentLog)
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        XCTAssertNotEqual(try sign("after lock", with: home + "/team.pub").code, 0, "coffer lock locks the team's key too")
    }

    /// Listing is no use of the keys (SPEC.md §14.2): every ssh connection lists them — a cron
    /// job's `git fetch` too — and must not keep an idle vault unlocked. A signature is a use.
    func testListingKeysDoesNotPushBackTheIdleTimeout() throws {
        XCTAssertEqual(try coffer(["ssh-key", "add", "laptop", "--password-stdin"], stdin: master + "\n").code, 0)
        XCTAssertEqual(try coffer(["unlock", "--password-stdin", "--timeout", "1h"], stdin: master + "\n").code, 0)
        try startAgent(["--no-pinentry"])
        func remaining() throws -> Int {
            let status = try coffer(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            return try XCTUnwrap(object?["secondsRemaining"] as? Int, status.stdout)
        }
        // The last use is kept in whole seconds and `status` prints whole seconds: 2.1 s on, an
        // unused session has at most 3,597 left, one used just now at least 3,598.
        Thread.sleep(forTimeInterval: 2.1)
        for _ in 0..<3 { XCTAssertEqual(try run("/usr/bin/ssh-add", ["-L"]).code, 0, agentLog) }
        XCTAssertLessThanOrEqual(try remaining(), 3597, "listing the keys re-armed the idle timeout")
        try run("/usr/bin/ssh-add", ["-L"]).stdout.write(toFile: home + "/key.pub", atomically: true, encoding: .utf8)
        XCTAssertEqual(try sign("a use", with: home + "/key.pub").code, 0, agentLog)
        XCTAssertGreaterThanOrEqual(try remaining(), 3598, "a signature is a use")
    }

    func testLockedAgentAsksThroughPinentryAndConfirmsEachSignature() throws {
        XCTAssertEqual(try coffer(["ssh-key", "add", "work", "--confirm", "--password-stdin"], stdin: master + "\n").code, 0)
        try startAgent()
        try run("/usr/bin/ssh-add", ["-L"]).stdout.write(toFile: home + "/key.pub", atomically: true, encoding: .utf8)

        try "wrong\n\(master)\nALLOW\nCANCEL\n".write(toFile: home + "/answers", atomically: true, encoding: .utf8)
        let signed = try sign("first", with: home + "/key.pub")
        XCTAssertEqual(signed.code, 0, signed.stderr + agentLog)
        let log = try String(contentsOfFile: home + "/pinentry.log", encoding: .utf8)
        XCTAssertTrue(log.contains("SETERROR"), "a wrong master password is asked again")
        XCTAssertTrue(log.contains("<confirm yes>"), log)
        XCTAssertFalse(log.contains(master), "the pinentry log never sees the password")

        let declined = try sign("second", with: home + "/key.pub")
        XCTAssertNotEqual(declined.code, 0, "declined at the confirmation: no signature")
        XCTAssertTrue(try String(contentsOfFile: home + "/pinentry.log", encoding: .utf8).contains("<confirm no>"))
        XCTAssertTrue(agentLog.contains("refused a signature: declined"), agentLog)
    }

    func testImportsPlainAndPassphraseProtectedOpenSSHKeysAndRefusesRSA() throws {
        for (name, passphrase) in [("plain", ""), ("protected", "key pass phrase")] {
            let generated = try run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", passphrase, "-C", "x", "-f", home + "/" + name])
            XCTAssertEqual(generated.code, 0, generated.stderr)
        }
        try "key pass phrase\n".write(toFile: home + "/passphrase", atomically: true, encoding: .utf8)
        let plainKey = try String(contentsOfFile: home + "/plain", encoding: .utf8)
        let plain = try coffer(["ssh-key", "add", "plain", "--import", "-", "--password-stdin"], stdin: master + "\n" + plainKey)
        XCTAssertEqual(plain.code, 0, "the key on stdin after the master password: " + plain.stderr)
        let protected = try coffer(["ssh-key", "add", "protected", "--import", home + "/protected", "--passphrase-file", home + "/passphrase",
                                    "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(protected.code, 0, protected.stderr)
        try "wrong\n".write(toFile: home + "/wrong", atomically: true, encoding: .utf8)
        let wrong = try coffer(["ssh-key", "add", "again", "--import", home + "/protected", "--passphrase-file", home + "/wrong", "--password-stdin"],
                               stdin: master + "\n")
        XCTAssertEqual(wrong.code, 77, wrong.stderr)

        let listed = try coffer(["ssh-key", "list"]).stdout
        for name in ["plain", "protected"] {
            let original = try String(contentsOfFile: home + "/\(name).pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
            XCTAssertTrue(listed.contains(original + " " + name), "\(name): the same public key as ssh-keygen's:\n\(listed)")
        }
        XCTAssertFalse(listed.contains("again"))

        XCTAssertEqual(try run("/usr/bin/ssh-keygen", ["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", home + "/rsa"]).code, 0)
        let rsa = try coffer(["ssh-key", "add", "rsa", "--import", home + "/rsa", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(rsa.code, 65)
        XCTAssertTrue(rsa.stderr.contains("ssh-rsa keys are not supported yet"), rsa.stderr)
    }

    /// SPEC §6.3: a private key that does not decode makes the item unusable, not corrupt —
    /// verify passes, show works, the agent lists its public key and refuses to sign.
    func testUndecodablePrivateKeyIsUnusableNotCorrupt() throws {
        XCTAssertEqual(try run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "x", "-f", home + "/real"]).code, 0)
        let publicKey = try String(contentsOfFile: home + "/real.pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let export = #"{"encrypted":false,"items":[{"type":5,"name":"broken","sshKey":{"privateKey":"-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n","publicKey":"\#(publicKey)"}}]}"#
        try export.write(toFile: home + "/export.json", atomically: true, encoding: .utf8)
        let imported = try coffer(["import", home + "/export.json", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(imported.code, 0, imported.stderr)
        let verified = try coffer(["verify", "--password-stdin"], stdin: master + "\n")
        XCTAssertEqual(verified.code, 0, "not reported as corrupt: " + verified.stdout + verified.stderr)
        XCTAssertEqual(try coffer(["show", "broken", "--password-stdin"], stdin: master + "\n").code, 0)

        try startAgent(["--no-pinentry"])
        let listed = try run("/usr/bin/ssh-add", ["-L"])
        XCTAssertEqual(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").prefix(2),
                       publicKey.split(separator: " ").prefix(2), "its public key is still listed")
        XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n").code, 0)
        try (publicKey + "\n").write(toFile: home + "/key.pub", atomically: true, encoding: .utf8)
        XCTAssertNotEqual(try sign("hello", with: home + "/key.pub").code, 0, "no signature from an undecodable key")
        XCTAssertTrue(agentLog.contains("refused a signature"), agentLog)
    }

    func testDaemonModePrintsTheShellLinesOfARunningAgent() throws {
        let printed = try coffer(["ssh-agent", "--print-env"])
        XCTAssertEqual(printed.stdout, "SSH_AUTH_SOCK='\(socket)'; export SSH_AUTH_SOCK;\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "--print-env starts nothing")

        XCTAssertEqual(try coffer(["ssh-key", "add", "daemon", "--password-stdin"], stdin: master + "\n").code, 0)
        let started = try coffer(["ssh-agent", "--daemon", "--no-pinentry"])
        XCTAssertEqual(started.code, 0, started.stderr)
        let pid = try XCTUnwrap(started.stdout.split(separator: ";").first { $0.contains("SSH_AGENT_PID=") }
            .flatMap { Int32($0.split(separator: "=")[1]) }, started.stdout)
        defer { kill(pid, SIGTERM) }
        XCTAssertTrue(started.stdout.hasPrefix("SSH_AUTH_SOCK='\(socket)'; export SSH_AUTH_SOCK;"), started.stdout)
        let listed = try run("/usr/bin/ssh-add", ["-L"])
        XCTAssertTrue(listed.stdout.hasSuffix(" daemon\n"), listed.stdout + listed.stderr)
        let commandLine = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0").prefix(2)
        XCTAssertEqual(commandLine.joined(separator: " "), "coffer ssh-agent", "the agent's name in ps")
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), "coffer\n")
        // A second daemon on the taken socket fails as the foreground does, with no PID printed.
        let second = try coffer(["ssh-agent", "--daemon", "--no-pinentry"])
        XCTAssertEqual(second.code, 69, second.stdout + second.stderr)
        XCTAssertFalse(second.stdout.contains("SSH_AGENT_PID"), second.stdout)
        XCTAssertEqual(try coffer(["ssh-agent", "--no-pinentry"]).code, 69, "the foreground too")
        kill(pid, SIGTERM)
        for _ in 0..<100 where FileManager.default.fileExists(atPath: socket) { usleep(20_000) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "SIGTERM ends the agent and removes its socket")
    }

    /// systemd's socket activation (`LISTEN_FDS`, descriptor 3), as the units in contrib/ use it.
    func testServesTheSocketSystemdPasses() throws {
        XCTAssertEqual(try coffer(["ssh-key", "add", "activated", "--password-stdin"], stdin: master + "\n").code, 0)
        let path = home + "/activated.sock"
        agent = try AgentProcess.activated(["ssh-agent", "--no-pinentry"], socket: path, environment: environment, log: home + "/agent.log")
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: path) { usleep(20_000) }
        environment["SSH_AUTH_SOCK"] = path
        var listed = try run("/usr/bin/ssh-add", ["-L"])
        for _ in 0..<50 where listed.code != 0 {
            usleep(50_000)
            listed = try run("/usr/bin/ssh-add", ["-L"])
        }
        XCTAssertEqual(listed.code, 0, listed.stderr + agentLog)
        XCTAssertTrue(listed.stdout.hasSuffix(" activated\n"), listed.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "nothing bound at the default path")
    }

    func testMalformedMessagesOtherUsersAndManyClientsDoNotBreakTheAgent() throws {
        XCTAssertEqual(try coffer(["ssh-key", "add", "laptop", "--password-stdin"], stdin: master + "\n").code, 0)
        try startAgent(["--no-pinentry"])
        let failure: [UInt8] = [0, 0, 0, 1, 5]

        let client = try AgentClient(path: socket)
        XCTAssertEqual(try client.exchange([0, 0, 0, 0]), failure, "length 0")
        XCTAssertEqual(try client.exchange([0, 0, 0, 1, 200]), failure, "unknown type")
        XCTAssertEqual(try client.exchange([0, 0, 0, 6, 13, 0, 0, 0, 9, 1]), failure, "a sign request cut short inside its frame")
        XCTAssertEqual(try client.exchange([0, 0, 0, 1, 17]), failure, "adding keys is the vault's business")
        XCTAssertEqual(try client.exchange([0, 0, 0, 1, 11]).dropFirst(4).first, 12, "the same client goes on being served")
        XCTAssertEqual(try client.exchange([0xff, 0xff, 0xff, 0xff, 11]), failure, "2^32-1: failure")
        XCTAssertEqual(try client.readToEnd(), [], "…and that client is closed")

        let truncated = try AgentClient(path: socket)
        try truncated.send([0, 0, 0, 50, 13, 0])
        truncated.close()

        let clients = try (0..<200).map { _ in try AgentClient(path: socket) }
        for client in clients { try client.send([0, 0, 0, 1, 11]) }
        let answers = try clients.map { try $0.receive() }
        XCTAssertEqual(Set(answers).count, 1, "200 concurrent clients get the same answer")
        XCTAssertEqual(answers[0][4], 12)

        // Another user, let in by loosened permissions, is still refused by SO_PEERCRED.
        guard geteuid() == 0 else { return }
        chmod(home, 0o755)
        chmod(home + "/run", 0o755)
        chmod(home + "/run/coffer", 0o755)
        chmod(socket, 0o666)
        let nobody = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/ssh-add", "-L"], setsid: false)
        XCTAssertNotEqual(nobody.code, 0)
        XCTAssertFalse(nobody.stdout.contains("ssh-ed25519"), "no key for another user")
        XCTAssertTrue(agentLog.contains("refused a client of uid 65534"), agentLog)
        XCTAssertEqual(try run("/usr/bin/ssh-add", ["-L"]).code, 0, "and the agent still serves its user")
    }
}

/// A raw agent client: frames bytes as they are, malformed ones included.
final class AgentClient {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(descriptor) }

    func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    func send(_ bytes: [UInt8]) throws {
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw POSIXError(.EPIPE) }
    }

    /// One whole reply frame.
    func receive() throws -> [UInt8] {
        let header = try read(4)
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        return header + (try read(length))
    }

    func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        try send(bytes)
        return try receive()
    }

    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            guard count > 0 else { return all }
            all += chunk[..<count]
        }
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(count, 1))
        while bytes.count < count {
            let got = Glibc.read(descriptor, &chunk, count - bytes.count)
            guard got > 0 else { throw POSIXError(.ECONNRESET) }
            bytes += chunk[..<got]
        }
        return bytes
    }
}
