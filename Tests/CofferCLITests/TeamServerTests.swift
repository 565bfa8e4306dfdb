import Foundation
import XCTest

/// A team as teams run one (SPEC.md §16): a smart-HTTP git server (`git http-backend` on
/// 127.0.0.1 with basic authentication) and two people on their own machines (HOMEs), each
/// with the real `coffer` and `git`, and Coffer's own git credential helper answering the
/// server's challenge with the person's login from their own vault — the product
/// authenticating its own sync.
final class TeamServerTests: XCTestCase {
    var root = ""
    var server: Process?
    var port = 0
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.path + "/coffer-team-http-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root + "/srv", withIntermediateDirectories: true)
        XCTAssertEqual(try tool("/usr/bin/git", ["init", "-q", "--bare", "-b", "main", root + "/srv/ops.git"], home: root).code, 0)
        try "alice:alice-server-pw\nbob:bob-server-pw\n".write(toFile: root + "/users", atomically: true, encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Helpers/git-http-server.py").standardized.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, root + "/srv", root + "/users", root + "/access.log"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        server = process
        var line = Data()
        while !line.contains(0x0A) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else { break }
            line += byte
        }
        port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        guard port > 0 else { throw XCTSkip("the test's HTTP git server did not start") }
    }

    override func tearDown() {
        for person in ["alice", "bob"] { _ = try? coffer(person, ["lock"]) }
        server?.terminate()
        server?.waitUntilExit()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A real program in `home`, with only the test's PATH (the built products first).
    func tool(_ path: String, _ arguments: [String], stdin: String = "", home: String) throws -> RunResult {
        try runProcess("/usr/bin/timeout", ["120", path] + arguments, stdin: stdin, environment: [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
            "USER": URL(fileURLWithPath: home).lastPathComponent, "PATH": "\(Self.products):/usr/bin:/bin", "GIT_TERMINAL_PROMPT": "0",
        ])
    }

    @discardableResult
    func coffer(_ person: String, _ arguments: [String], stdin: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> RunResult {
        let result = try tool(Self.products + "/coffer", arguments, stdin: stdin, home: root + "/" + person)
        XCTAssertEqual(result.code, 0, "\(person): coffer \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    /// A person's machine: a vault holding their login to the server, unlocked, and git told to
    /// ask Coffer for credentials.
    func machine(_ person: String) throws {
        let home = root + "/" + person
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try coffer(person, ["init", "--kdf", "interactive", "--password-stdin"], stdin: "master of \(person)\n")
        try coffer(person, ["add", "http://127.0.0.1:\(port)", person, "--password-stdin"], stdin: "master of \(person)\n\(person)-server-pw\n")
        try coffer(person, ["unlock", "--password-stdin"], stdin: "master of \(person)\n")
        XCTAssertEqual(try tool("/usr/bin/git", ["config", "--global", "credential.helper", Self.products + "/git-credential-coffer"], home: home).code, 0)
    }

    func testATeamSyncsThroughAnAuthenticatedHTTPServerWithCoffersOwnCredentialHelper() throws {
        try machine("alice")
        try machine("bob")
        let url = "http://127.0.0.1:\(port)/ops.git"
        try coffer("alice", ["team", "create", "ops", "--remote", url])
        let bob = try coffer("bob", ["whoami", "--json"]).stdout
        let bobRecipient = (try JSONSerialization.jsonObject(with: Data(bob.utf8)) as? [String: String])?["recipient"] ?? ""
        try coffer("alice", ["team", "add", "ops", bobRecipient, "--as", "bob"])
        let founder = (try JSONSerialization.jsonObject(with: Data(try coffer("alice", ["whoami", "--json"]).stdout.utf8)) as? [String: String])?["fingerprint"] ?? ""
        try coffer("bob", ["team", "join", url, "--founder", founder])
        try coffer("alice", ["add", "--team", "ops", "deploy.example", "ci", "--password-stdin"], stdin: "master of alice\nteam-secret\n")
        try coffer("alice", ["team", "sync"])
        try coffer("bob", ["team", "sync"])
        XCTAssertEqual(try coffer("bob", ["fill", "deploy.example"]).stdout, "team-secret\n")
        // `coffer run` takes a team's secret by TEAM:ENTRY.
        let ran = try coffer("bob", ["run", "--env", "TOKEN=coffer://ops:deploy.example/ci/password", "--no-mask", "--", "/bin/sh", "-c", "echo \"[$TOKEN]\""])
        XCTAssertEqual(ran.stdout, "[team-secret]\n")

        let log = (try? String(contentsOfFile: root + "/access.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(log.contains("alice POST /ops.git/git-receive-pack"), "alice pushed as herself: \(log)")
        XCTAssertTrue(log.contains("bob POST /ops.git/git-upload-pack"), "bob fetched as himself: \(log)")
        // A wrong login stored in the vault: the server refuses and nothing is lost.
        XCTAssertEqual(try tool("/usr/bin/git", ["ls-remote", url], home: root + "/nobody").code == 0, false, "the server wants a login")
    }
}
