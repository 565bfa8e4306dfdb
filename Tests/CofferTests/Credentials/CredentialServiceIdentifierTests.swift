@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// Apple's `ASCredentialServiceIdentifier` as a person types one (SPEC.md §8.1).
final class CredentialServiceIdentifierTests: XCTestCase {
    func testWhatAPersonTypesIsADomainOrAURL() {
        XCTAssertEqual(CredentialServiceIdentifier(parsing: "GitHub.com"), CredentialServiceIdentifier(identifier: "github.com", type: .domain),
                       "a domain is case-insensitive and stored in lower case")
        XCTAssertEqual(CredentialServiceIdentifier(parsing: "https://Login.Example.com/Path"),
                       CredentialServiceIdentifier(identifier: "https://Login.Example.com/Path", type: .URL), "a URL is kept as given")
        XCTAssertEqual(CredentialServiceIdentifier(parsing: "ssh://git@host").type, .URL)
        XCTAssertEqual("\(CredentialServiceIdentifier(parsing: "example.com"))", "example.com")
    }

    func testAnIdentityCarriesItsRecordAndService() {
        let service = CredentialServiceIdentifier(parsing: "example.com")
        let identity = PasswordCredentialIdentity(serviceIdentifier: service, user: "alice", recordIdentifier: "abc")
        XCTAssertEqual(identity.serviceIdentifier, service)
        XCTAssertEqual(identity.user, "alice")
        XCTAssertEqual(identity.recordIdentifier, "abc")
    }
}
