import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferHostKit
@testable import CofferFillAgent
import Foundation
import XCTest

/// The provision rule of SPEC.md §8.1: a password leaves without a person choosing it only for a
/// match at or above its record's mode threshold. Every row of the SPEC table is checked end to
/// end: a record in a real vault, filled through `AutoFillHost` with nobody present.
final class ProvisionRuleTests: XCTestCase {
    struct Row {
        let mode: MatchMode
        let identity: CredentialServiceIdentifier
        let request: CredentialServiceIdentifier
        let expected: String
    }

    static func specRows() throws -> [Row] {
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../SPEC.md").standardized
        let text = try String(contentsOf: spec, encoding: .utf8)
        guard let start = text.range(of: "| mode | identity | request | provision |") else { return [] }
        var rows: [Row] = []
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4, let mode = MatchMode(rawValue: cells[0]),
                  let identity = MatchingTableTests.service(cells[1]), let request = MatchingTableTests.service(cells[2])
            else { continue }
            rows.append(Row(mode: mode, identity: identity, request: request, expected: cells[3]))
        }
        return rows
    }

    func testEveryRowOfTheSpecTable() throws {
        let rows = try Self.specRows()
        XCTAssertGreaterThanOrEqual(rows.count, 16, "the table was not found or lost rows")
        for row in rows {
            let vault = try Fixture.vault()
            try vault.add(RecordDraft(
                serviceIdentifiers: [row.identity], user: "u", password: "pw", matchMode: row.mode, otp: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
            let host = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: nil, sessions: nil))
            // A one-time code follows exactly the rule a password does (iOS 18's code AutoFill).
            for kind in [AutoFillHost.FillKind.password, .oneTimeCode] {
                let outcome: String = switch host.fill(serviceIdentifiers: [row.request], allowInteraction: false, kind: kind) {
                case .filled(let credential, _): credential.password == "pw" && kind == .password ? "automatic" : "wrong password"
                case .filledCode(let code, _): code.code.count == 6 && kind == .oneTimeCode ? "automatic" : "wrong code"
                case .choiceRequired(let suggestions): suggestions.count == 1 ? "suggestion" : "\(suggestions.count) suggestions"
                case .noMatch: "none"
                case .cancelled(let error): "cancelled \(error)"
                }
                XCTAssertEqual(outcome, row.expected, "\(kind): \(row.mode) \(row.identity.identifier) for \(row.request.identifier)")
            }
            // What the store says agrees with what the host did.
            let listed = try vault.identityStore.credentialIdentities(for: [row.request])
            XCTAssertEqual(listed.isEmpty, row.expected == "none", "suggested: \(row.identity.identifier) for \(row.request.identifier)")
            XCTAssertEqual(listed.first?.allowsAutomaticFill ?? false, row.expected == "automatic")
        }
    }

    /// The repro of the issue: gina's password for git.example.com must not reach other.example.com.
    func testASiblingIsOnlyFilledWhenAPersonChoosesIt() throws {
        let owner = try Fixture.vault()
        let gina = try owner.add(Fixture.draft("git.example.com", user: "gina", password: "S3cret"))
        let request = [CredentialServiceIdentifier(parsing: "https://other.example.com/")]
        let vault = try Fixture.open(owner)
        try vault.unlock(masterPassword: Fixture.secret())

        let nobody = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: nil, sessions: nil))
        XCTAssertEqual(nobody.fill(serviceIdentifiers: request, allowInteraction: false), .choiceRequired([
            PasswordCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(identifier: "git.example.com", type: .domain),
                                       user: "gina", recordIdentifier: gina.id.hex),
        ]))
        XCTAssertEqual(nobody.fill(serviceIdentifiers: request, allowInteraction: true), .choiceRequired(
            [PasswordCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(identifier: "git.example.com", type: .domain),
                                        user: "gina", recordIdentifier: gina.id.hex)]), "no interface: nobody can choose")

        let declines = ScriptedInteraction(choice: { _ in nil })
        let declined = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: declines, sessions: nil))
        XCTAssertEqual(declined.fill(serviceIdentifiers: request, allowInteraction: true), .cancelled(ExtensionError(.userCanceled)))
        XCTAssertEqual(declines.offered.map(\.match?.level), [.registrableDomain], "the list says how each matched")

        let chooses = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: ScriptedInteraction(), sessions: nil))
        guard case .filled(let credential, _) = chooses.fill(serviceIdentifiers: request, allowInteraction: true) else {
            return XCTFail("a chosen sibling is filled")
        }
        XCTAssertEqual(credential.password, "S3cret")

        // A chooser cannot smuggle in an identity it was not offered.
        let forger = ScriptedInteraction(choice: { _ in
            PasswordCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(identifier: "other.example.com", type: .domain),
                                       user: "gina", recordIdentifier: gina.id.hex)
        })
        let forged = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: forger, sessions: nil))
        XCTAssertEqual(forged.fill(serviceIdentifiers: request, allowInteraction: true), .cancelled(ExtensionError(.userCanceled)))
    }

    func testAHostLevelMatchWinsOverASiteModeSiblingAndUsersFilter() throws {
        let vault = try Fixture.vault()
        try vault.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "www.example.com")], user: "wide",
                                  password: "site-wide", matchMode: .site))
        try vault.add(Fixture.draft("login.example.com", user: "exact", password: "own-host"))
        let host = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: nil, sessions: nil))
        let login = [CredentialServiceIdentifier(parsing: "https://login.example.com/")]
        guard case .filled(let own, _) = host.fill(serviceIdentifiers: login, allowInteraction: false) else { return XCTFail() }
        XCTAssertEqual(own.password, "own-host")
        guard case .filled(let wide, _) = host.fill(serviceIdentifiers: login, user: "wide", allowInteraction: false) else { return XCTFail() }
        XCTAssertEqual(wide.password, "site-wide", "a site-mode record fills a sibling host by itself")
        XCTAssertEqual(host.fill(serviceIdentifiers: login, user: "nobody", allowInteraction: false), .noMatch)
    }

    func testAStoreSuppliedPasswordWithoutATerminalNeverPicksASibling() throws {
        let owner = try Fixture.vault()
        try owner.add(Fixture.draft("git.example.com", user: "gina", password: "S3cret"))
        try owner.identityStore.disable()
        let vault = try Fixture.open(owner)
        // The provider's list (store off, locked): an interface with nobody to choose returns only
        // what the rule allows, as the CLI's does without a terminal.
        let script = ScriptedInteraction(passwords: [Fixture.password], choice: nil)
        let host = AutoFillHost(provider: CredentialProvider(vault: vault, interaction: script, sessions: nil))
        XCTAssertEqual(host.fill(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "other.example.com")], allowInteraction: true),
                       .cancelled(ExtensionError(.userCanceled)))
        XCTAssertEqual(script.offered.map(\.allowsAutomaticFill), [false])
    }

    func testGitAndDockerRules() {
        func key(_ text: String) -> ServiceKey { ServiceKey(parsing: CredentialServiceIdentifier(parsing: text)) }
        let git = ServiceMatchingRules.git
        XCTAssertTrue(git.admits(key("https://git.example.com"), for: key("https://git.example.com")))
        XCTAssertTrue(git.admits(key("git.example.com"), for: key("https://git.example.com")), "a typed domain agrees with any protocol")
        XCTAssertFalse(git.admits(key("http://git.example.com"), for: key("https://git.example.com")), "protocol must agree")
        XCTAssertFalse(git.admits(key("https://git.example.com:8443"), for: key("https://git.example.com")))
        XCTAssertTrue(git.admits(key("https://git.example.com:443"), for: key("https://git.example.com")), "443 is https's port")
        XCTAssertFalse(git.admits(key("git.example.com"), for: key("https://git.example.com:8443")))
        XCTAssertTrue(git.admits(key("https://git.example.com/team/repo.git"), for: key("https://git.example.com/team/repo.git")))
        XCTAssertFalse(git.admits(key("https://git.example.com/team/other.git"), for: key("https://git.example.com/team/repo.git")),
                       "with useHttpPath the path must agree")
        XCTAssertFalse(git.admits(key("git.example.com"), for: key("https://git.example.com/team/repo.git")))
        XCTAssertTrue(git.admits(key("https://git.example.com/team/repo.git"), for: key("https://git.example.com")),
                      "a request without a path compares no path")
        XCTAssertFalse(git.admits(key("other.example.com"), for: key("https://git.example.com")))

        let docker = ServiceMatchingRules.docker
        XCTAssertTrue(docker.admits(key("registry.example.com:5000"), for: key("registry.example.com:5000")))
        XCTAssertFalse(docker.admits(key("registry.example.com"), for: key("registry.example.com:5000")))
        XCTAssertTrue(docker.admits(key("https://index.docker.io/v1/"), for: key("index.docker.io")), "no port is the registry's 443")
        XCTAssertFalse(docker.admits(key("registry.example.com:5000"), for: key("registry.example.com:5001")))
    }
}
