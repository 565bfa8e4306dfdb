import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import XCTest

/// `list --json` is written row by row (a listing of 100,000 is never one string); it must be
/// the canonical JSON the format's writer gives for the same values, escapes and all, whatever
/// piece boundaries fall between rows.
final class StreamedListingTests: XCTestCase {
    func testStreamedJSONIsTheCanonicalDocument() {
        let tricky = ["plain", "quote \" and backslash \\", "line\nbreak\ttab", "control \u{01}\u{1F}", "zoë ünïcödé 🔑", "/slash/"]
        var identities: [PasswordCredentialIdentity] = []
        for index in 0..<3000 {  // enough rows to span several written pieces
            let text = tricky[index % tricky.count]
            identities.append(PasswordCredentialIdentity(
                serviceIdentifier: CredentialServiceIdentifier(identifier: "https://\(index).example.com/\(text)", type: index % 2 == 0 ? .URL : .domain),
                user: "\(text) \(index)", recordIdentifier: String(format: "%032x", index + 1), rank: index % 5 - 2))
        }
        let listing = IdentityListing(identities)
        let expected = JSONValue.array(identities.map { identity in
            .object([
                "name": "", "rank": .integer(identity.rank), "recordIdentifier": .string(identity.recordIdentifier),
                "serviceIdentifier": ["identifier": .string(identity.serviceIdentifier.identifier), "type": .string(identity.serviceIdentifier.type.rawValue)],
                "type": "password", "user": .string(identity.user),
            ])
        }).canonicalText + "\n"

        var pieces: [String] = []
        let io = IO(standardInput: FileDescriptorLineReader(fd: -1), standardOutput: { pieces.append($0) }, standardError: { _ in },
                    terminal: nil, environment: [:])
        var output = StreamedOutput(io)
        JSONOutput.writeRows(of: listing, to: &output)
        output.flush()
        XCTAssertGreaterThan(pieces.count, 1, "written in pieces")
        XCTAssertEqual(pieces.joined(), expected)
    }
}
