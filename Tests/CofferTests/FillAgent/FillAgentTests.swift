import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferHostKit
@testable import CofferFillAgent
import Foundation
import XCTest

/// The fill agent's answers (SPEC.md §8.5), asked in-process through `respond(to:)` — the same
/// bytes the socket carries. The socket, the CLI's use of it and the agent's lifetime are
/// tested with real processes in CofferCLITests/FillAgentProcessTests.
final class FillAgentTests: XCTestCase {
    var stateHome = ""
    var vault: Vault!
    let sessions = KeyringSessions()
    var agent: FillAgent!
    var log: [String] = []

    override func setUpWithError() throws {
        stateHome = Fixture.containerPath("state-home")
        let configuration = VaultConfiguration(kdfPolicy: .relaxedForTesting, stateDirectory: stateHome + "/coffer")
        vault = try Vault.create(in: GroupContainer(path: Fixture.containerPath()), masterPassword: Fixture.secret(),
                                 kdf: KDFPolicy.testingParameters, configuration: configuration)
        _ = try vault.add(Fixture.draft("accounts.example.com", user: "alice", password: "S3cretPassword"))
        agent = FillAgent(sessions: sessions, log: { [unowned self] in log.append($0) })
        agent.kdfPolicy = .relaxedForTesting
    }

    override func tearDownWithError() throws {
        _ = try? sessions.revoke(for: vault.vaultID)
    }

    func fill(_ service: String, user: String? = nil, version: String = cofferVersion, container: String? = nil) throws -> FillAgentReply {
        let request = FillAgentRequest.fill(FillAgentFill(
            version: version, container: container ?? vault.container.path, environment: [("XDG_STATE_HOME", stateHome)],
            service: service, user: user, kind: .password))
        let framed = agent.respond(to: Array(request.encoded.dropFirst(4)))
        XCTAssertEqual(framed.prefix(4).reduce(0) { $0 << 8 | Int($1) }, framed.count - 4, "one whole frame")
        return try FillAgentReply(Array(framed.dropFirst(4)))
    }

    func startSession(idle: TimeInterval = 60) throws {
        try sessions.store(vaultKey: vault.keys().vaultKey, for: vault.vaultID, idleTimeout: idle)
    }

    func testAnswersASilentFillOnlyWhileASessionLives() throws {
        guard case .declined = try fill("accounts.example.com") else { return XCTFail("no session: nothing is handed out") }
        XCTAssertFalse(agent.isStillNeeded)
        try startSession()
        let reply = try fill("https://accounts.example.com/login")
        guard case .password(let credential, let identity?) = reply else { return XCTFail("\(reply)") }
        XCTAssertEqual(credential, PasswordCredential(user: "alice", password: "S3cretPassword"))
        XCTAssertEqual(identity.serviceIdentifier.identifier, "accounts.example.com")
        XCTAssertTrue(agent.isStillNeeded, "it lives for the vault it served")
        XCTAssertGreaterThan(agent.buckets.byteCount, 0, "it keeps the buckets it opened")
        try sessions.revoke(for: vault.vaultID)
        guard case .declined(let reason) = try fill("accounts.example.com") else { return XCTFail("locked means locked through the agent") }
        XCTAssertFalse(reason.contains("S3cret") || reason.contains("alice"), reason)
        XCTAssertFalse(agent.isStillNeeded, "no live session: it ends")
        XCTAssertEqual(agent.buckets.byteCount, 0, "and what it kept of the index went when it found the vault locked")
        XCTAssertFalse(log.joined().contains("S3cret"), "\(log)")
    }

    func testDeclinesWhatAPersonMustDecideOrThatItCannotServe() throws {
        try startSession()
        for (service, user, version, container) in [
            ("mail.example.com", nil, cofferVersion, nil),  // another host of the site: a person chooses
            ("example.org", nil, cofferVersion, nil),  // no match
            ("accounts.example.com", "bob", cofferVersion, nil),  // not this user
            ("accounts.example.com", nil, "0.0.1-other", nil),  // another version may read differently
            ("accounts.example.com", nil, cofferVersion, "relative/vault"),
        ] as [(String, String?, String, String?)] {
            let reply = try fill(service, user: user, version: version, container: container)
            guard case .declined = reply else { return XCTFail("\(service) \(user ?? "") \(version): \(reply)") }
        }
        guard case .password = try fill("accounts.example.com", user: "alice") else { return XCTFail("the user's own login") }
        XCTAssertTrue(agent.isOutdated, "a client of another version asked: an upgrade replaced Coffer")
        XCTAssertFalse(agent.isStillNeeded, "so this agent ends, and the next fill starts one of the new version")
    }

    /// The agent is told where the container is from the root: it runs elsewhere (in `/`).
    func testAContainerIsNamedFromTheRoot() {
        let directory = FileManager.default.currentDirectoryPath
        XCTAssertEqual(GroupContainer(path: "some/vault/").absolutePath, directory + "/some/vault")
        XCTAssertEqual(GroupContainer(path: "/srv/vault").absolutePath, "/srv/vault")
    }

    /// A fill through the agent is a use (SPEC.md §8.4): it re-arms the idle timeout.
    func testAFillThroughTheAgentPushesBackTheIdleTimeout() throws {
        try startSession(idle: 3)
        sleep(2)
        guard case .password = try fill("accounts.example.com") else { return XCTFail("filled") }
        sleep(2)
        XCTAssertNotEqual(try sessions.status(for: vault.vaultID), .locked, "4 s after the start of a 3 s session, 2 s after a use")
    }

    func testMalformedRequestsAreDeclinedAndRoundTripsHold() throws {
        let fill = FillAgentFill(container: "/c", environment: [("HOME", "/h"), ("COFFER_WEB_QUIRKS", "/q")], service: "https://a.example/x",
                                 user: "ü", kind: .oneTimeCode)
        let body = Array(FillAgentRequest.fill(fill).encoded.dropFirst(4))
        XCTAssertEqual(try FillAgentRequest(body), .fill(fill))
        XCTAssertEqual(try FillAgentRequest(Array(FillAgentRequest.check.encoded.dropFirst(4))), .check)
        for cut in 0..<body.count { XCTAssertThrowsError(try FillAgentRequest(Array(body[..<cut])), "cut at \(cut)") }
        XCTAssertThrowsError(try FillAgentRequest(body + [0]), "trailing bytes")
        XCTAssertThrowsError(try FillAgentRequest([9]), "unknown type")
        var writer = SSHWireWriter()
        writer.byte(1); writer.string(cofferVersion); writer.string("/c"); writer.uint32(1); writer.string("PATH"); writer.string("/evil")
        writer.string("a.example"); writer.byte(0); writer.byte(0)
        XCTAssertThrowsError(try FillAgentRequest(writer.bytes), "a variable the agent never takes from a client")
        guard case .declined = try FillAgentReply(Array(agent.respond(to: writer.bytes).dropFirst(4))) else { return XCTFail() }

        let identity = OneTimeCodeCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(identifier: "https://a.example/", type: .URL),
                                                     label: "a", recordIdentifier: "00ff", rank: -3)
        for reply in [FillAgentReply.code(OneTimeCodeCredential(code: "123456"), identity: identity), .ok, .declined(reason: "why"),
                      .password(PasswordCredential(user: "u", password: "p"), identity: nil)] {
            let encoded = Array(reply.encoded.dropFirst(4))
            XCTAssertEqual(try FillAgentReply(encoded), reply)
            XCTAssertThrowsError(try FillAgentReply(encoded + [1]))
        }
    }
}
