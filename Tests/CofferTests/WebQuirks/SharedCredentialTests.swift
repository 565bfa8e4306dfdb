import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Sites that share their accounts (SPEC.md §8.1.1), with the shipped data: a login saved for
/// one is a labelled suggestion on the other, never filled without a choice; the table in SPEC
/// is checked row by row, end to end.
final class SharedCredentialTests: XCTestCase {
    static let quirks = WebQuirks(directory: PasswordRulesTests.quirks)

    static func table() throws -> SharedCredentials { try quirks.sharedCredentials() }

    func testEveryRowOfTheSpecTable() throws {
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../SPEC.md").standardized
        let text = try String(contentsOf: spec, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "| mode | saved for | request | shared provision |"))
        var checked = 0
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 4, let mode = MatchMode(rawValue: cells[0]),
                  let saved = MatchingTableTests.service(cells[1]), let request = MatchingTableTests.service(cells[2])
            else { continue }
            let vault = try Fixture.vault()
            try vault.add(RecordDraft(serviceIdentifiers: [saved], user: "u", password: "pw", matchMode: mode))
            let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
            provider.sharedCredentials = { try? Self.table() }
            let outcome: String = switch AutoFillHost(provider: provider).fill(serviceIdentifiers: [request], allowInteraction: false) {
            case .filled: "automatic"
            case .filledCode: "a code"
            case .choiceRequired(let suggestions): suggestions.count == 1 ? "suggestion" : "\(suggestions.count) suggestions"
            case .noMatch: "none"
            case .cancelled(let error): "cancelled \(error)"
            }
            XCTAssertEqual(outcome, cells[3], "\(mode) \(saved.identifier) on \(request.identifier)")
            // The store agrees, and says how it matched.
            let listed = try vault.identityStore.credentialIdentities(for: [request], minimumLevel: .sharedCredential, sharing: Self.table())
            XCTAssertEqual(listed.map(\.match?.level), cells[3] == "none" ? [] : [.sharedCredential], "\(saved.identifier) on \(request.identifier)")
            XCTAssertFalse(listed.contains(where: \.allowsAutomaticFill))
            // Without the data, or at the default level, nothing of another site.
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [request]).count, 0)
            XCTAssertEqual(try vault.identityStore.credentialIdentities(for: [request], minimumLevel: .sharedCredential).count, 0)
            checked += 1
        }
        XCTAssertGreaterThanOrEqual(checked, 10, "the table was not found or lost rows")
    }

    func testTheSourcesOfAHost() throws {
        let table = try Self.table()
        XCTAssertTrue(table.sources(forHost: "www.airbnb.co.uk").contains(SharedCredentials.Source(domain: "airbnb.com", obsoleted: false)))
        XCTAssertFalse(table.sources(forHost: "www.airbnb.co.uk").contains { $0.domain == "airbnb.co.uk" }, "never the host's own domain")
        XCTAssertEqual(table.sources(forHost: "discord.com").filter { $0.domain == "discordapp.com" },
                       [SharedCredentials.Source(domain: "discordapp.com", obsoleted: true)])
        XCTAssertFalse(table.sources(forHost: "discordapp.com").contains { $0.domain == "discord.com" }, "from → to is one way")
        XCTAssertEqual(table.sources(forHost: "example.com"), [])
        XCTAssertTrue(table.relates("discordapp.com", "discord.com") && table.relates("discord.com", "www.discordapp.com"))
        XCTAssertFalse(table.relates("discord.com", "airbnb.com"))
    }

    func testDamagedDataIsRefusedWhole() {
        for bad in [#"{"shared": ["a.com"]}"#, #"[{"shared": "a.com"}]"#, #"[{"from": ["a.com"]}]"#, #"[{"shared": ["a.com", "not a host"]}]"#, "[{"] {
            XCTAssertThrowsError(try SharedCredentials(parsing: Array(bad.utf8)), bad)
        }
        XCTAssertNoThrow(try SharedCredentials(parsing: Array(#"[{"shared": ["a.com", "b.com"]}, {"from": ["c.com"], "to": ["d.com"]}]"#.utf8)))
    }

    /// A site's own logins come first, any host of it next, the sharing sites' last; a person
    /// choosing on a terminal sees the shared one and may pick it.
    func testOwnLoginsFirstAndAChoiceFillsAShared() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft("airbnb.com", user: "shared", password: "from-dot-com"))
        try vault.add(Fixture.draft("www.airbnb.co.uk", user: "sibling", password: "sibling-host"))
        try vault.add(Fixture.draft("airbnb.co.uk", user: "own", password: "own-host"))
        let request = [CredentialServiceIdentifier(parsing: "https://airbnb.co.uk/login")]
        let listed = try vault.identityStore.credentialIdentities(for: request, minimumLevel: .sharedCredential, sharing: Self.table())
        XCTAssertEqual(listed.map(\.identity.user), ["own", "sibling", "shared"])
        XCTAssertEqual(listed.map(\.match?.level), [.host, .registrableDomain, .sharedCredential])

        let shared = try Fixture.vault()
        try shared.add(Fixture.draft("airbnb.com", user: "shared", password: "from-dot-com"))
        let chooser = ScriptedInteraction()
        let provider = CredentialProvider(vault: shared, interaction: chooser, sessions: nil)
        provider.sharedCredentials = { try? Self.table() }
        guard case .filled(let credential, _) = AutoFillHost(provider: provider).fill(serviceIdentifiers: request, allowInteraction: true) else {
            return XCTFail("a person may choose a sharing site's login")
        }
        XCTAssertEqual(credential.password, "from-dot-com")
        XCTAssertEqual(chooser.offered.map(\.match?.level), [.sharedCredential])

        // The provider's own list offers it too (prepareCredentialList, iOS's "Passwords…").
        let listChooser = ScriptedInteraction()
        let listing = CredentialProvider(vault: shared, interaction: listChooser, sessions: nil)
        listing.sharedCredentials = { try? Self.table() }
        listing.prepareCredentialList(for: request)
        XCTAssertEqual(listChooser.offered.map(\.identity.user), ["shared"])
        guard case .completed(let listed1)? = listing.extensionContext.outcome else { return XCTFail("the list did not complete") }
        XCTAssertEqual(listed1.password, "from-dot-com")
    }

    /// A fill that finds the site's own login never reads the data.
    func testAFillWithItsOwnLoginNeverAsksForTheData() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft("airbnb.co.uk", user: "own", password: "own-host"))
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        nonisolated(unsafe) var asked = 0
        provider.sharedCredentials = { asked += 1; return try? Self.table() }
        guard case .filled = AutoFillHost(provider: provider).fill(
            serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://airbnb.co.uk/")], allowInteraction: false) else { return XCTFail() }
        XCTAssertEqual(asked, 0)
        // Git's rules never reach past the host.
        _ = AutoFillHost(provider: provider, rules: .git).fill(
            serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://airbnb.de/")], allowInteraction: false)
        XCTAssertEqual(asked, 0)
    }
}
