import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Checks exactly the table of SPEC.md §8.1, parsed from SPEC.md itself.
final class MatchingTableTests: XCTestCase {
    struct Row {
        let identity: CredentialServiceIdentifier
        let request: CredentialServiceIdentifier
        let expected: String
    }

    static func specRows() throws -> [Row] {
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../SPEC.md").standardized
        let text = try String(contentsOf: spec, encoding: .utf8)
        guard let start = text.range(of: "| identity | request | match |") else { return [] }
        var rows: [Row] = []
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let identity = service(cells[0]), let request = service(cells[1]) else { continue }
            rows.append(Row(identity: identity, request: request, expected: cells[2]))
        }
        return rows
    }

    static func service(_ cell: String) -> CredentialServiceIdentifier? {
        let parts = cell.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let identifier = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        return CredentialServiceIdentifier(identifier: identifier, type: parts[0] == "URL" ? .URL : .domain)
    }

    func testEveryRowOfTheSpecTable() throws {
        let rows = try Self.specRows()
        XCTAssertGreaterThanOrEqual(rows.count, 25, "the table was not found or lost rows")
        XCTAssertTrue(DomainNames.hasPublicSuffixList)
        for row in rows {
            let level = ServiceMatcher.matchLevel(identity: row.identity, request: row.request)
            XCTAssertEqual(level?.description ?? "none", row.expected, "\(row.identity.identifier) vs \(row.request.identifier)")
        }
    }

    func testCanonicalHosts() {
        XCTAssertEqual(HostNames.canonicalHost("Bücher.DE."), "xn--bcher-kva.de")
        XCTAssertEqual(HostNames.canonicalHost("xn--bcher-kva.de"), "xn--bcher-kva.de")
        XCTAssertNil(HostNames.canonicalHost("exa mple.com"))
        XCTAssertNil(HostNames.canonicalHost("a/b"))
        XCTAssertNil(HostNames.canonicalHost(""))
        XCTAssertEqual(DomainNames.registrableDomain(ofCanonicalHost: "login.example.co.uk"), "example.co.uk")
        XCTAssertNil(DomainNames.registrableDomain(ofCanonicalHost: "co.uk"))
    }
}

final class RankingTests: XCTestCase {
    func identity(_ service: String, _ user: String, rank: Int = 0, type: CredentialServiceIdentifier.IdentifierType = .domain) -> PasswordCredentialIdentity {
        PasswordCredentialIdentity(
            serviceIdentifier: CredentialServiceIdentifier(identifier: service, type: type), user: user,
            recordIdentifier: String(repeating: user.first.map(String.init) ?? "0", count: 1), rank: rank)
    }

    func rankedUsers(_ identities: [(PasswordCredentialIdentity, UInt64)], request: [CredentialServiceIdentifier]) -> [String] {
        let parsed = request.map(ServiceKey.init(parsing:))
        let matched = identities.compactMap { identity, used in
            ServiceMatcher.bestMatch(of: ServiceKey(parsing: identity.serviceIdentifier), in: parsed).map {
                RankedIdentity(identity: identity, match: $0, lastUsed: used)
            }
        }
        return ServiceMatcher.ordered(matched).map(\.identity.user)
    }

    func testMoreSpecificMatchesComeFirst() {
        let request = [CredentialServiceIdentifier(identifier: "https://m.example.com/login", type: .URL)]
        let users = rankedUsers([
            (identity("example.com", "site"), 0),
            (identity("https://m.example.com/login", "exact", type: .URL), 0),
            (identity("m.example.com", "host"), 0),
            (identity("other.org", "unrelated"), 0),
        ], request: request)
        XCTAssertEqual(users, ["exact", "host", "site"])
    }

    func testEarlierRequestEntriesOutrankLaterOnes() {
        let request = [
            CredentialServiceIdentifier(identifier: "m.example.com", type: .domain),
            CredentialServiceIdentifier(identifier: "shop.example.org", type: .domain),
        ]
        let users = rankedUsers([(identity("shop.example.org", "second"), 0), (identity("m.example.com", "first"), 0)], request: request)
        XCTAssertEqual(users, ["first", "second"])
    }

    func testRankThenRecentUseBreakTies() {
        let request = [CredentialServiceIdentifier(identifier: "example.com", type: .domain)]
        let users = rankedUsers([
            (identity("example.com", "old"), 100),
            (identity("example.com", "recent"), 200),
            (identity("example.com", "ranked", rank: 5), 0),
        ], request: request)
        XCTAssertEqual(users, ["ranked", "recent", "old"])
    }
}
