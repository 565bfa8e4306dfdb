import Coffer
@testable import CofferBrowserHost
@testable import CofferCLI
import XCTest

/// A code (exit status, browser-host error) is a property of the error's type, decided where
/// the error is made — never recovered from its wording (issue 29, item 2). Every provider
/// answer is reworded here, and no code may change.
final class TypedFailureTests: XCTestCase {
    static let vaultErrors: [VaultError] = [
        .wrongPassword, .locked, .recordNotFound(try! RecordID.random()), .noVault(container: "/c"), .vaultExists(container: "/c"),
        .corrupt(file: "records/ab/x", reason: "authentication failed"), .kdfParametersOutOfRange(file: "vault.coffer"),
        .rolledBack(generation: 3, highestSeen: 9), .invalidInput("bad"), .crypto(.authenticationFailed),
    ]

    /// Wordings a future edit could give any message: the old one's keywords, none, or another's.
    static let rewordings: [String?] = [nil, "", "tampered corrupt rolled back wrong master password", "the vault is locked", "Ça n'a pas marché"]

    func testEveryProviderAnswerKeepsItsCodeWhateverItsWording() {
        for underlying in Self.vaultErrors {
            let expected = CLIError.from(underlying).code
            let expectedHost = BrowserHostError.from(ExtensionError(.failed, failureReason: "x", underlyingError: underlying)).code
            for reason in Self.rewordings {
                let answer = ExtensionError(.failed, failureReason: reason, underlyingError: underlying)
                XCTAssertEqual(CLIError.from(answer).code, expected, "\(underlying) worded \(reason ?? "nil")")
                XCTAssertEqual(BrowserHostError.from(answer).code, expectedHost, "\(underlying) worded \(reason ?? "nil")")
            }
        }
        for code in [ExtensionError.Code.failed, .userCanceled, .userInteractionRequired, .credentialIdentityNotFound] {
            let expected = CLIError.from(ExtensionError(code)).code
            for reason in Self.rewordings {
                XCTAssertEqual(CLIError.from(ExtensionError(code, failureReason: reason)).code, expected, "\(code) worded \(reason ?? "nil")")
                XCTAssertEqual(BrowserHostError.from(ExtensionError(code, failureReason: reason)).code,
                               BrowserHostError.from(ExtensionError(code)).code)
            }
        }
        // The cases that matter most, by name.
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.wrongPassword)).code, .permissionDenied)
        XCTAssertEqual(CLIError.from(ExtensionError(.failed, failureReason: "wrong master password")).code, .failure,
                       "a reason alone, without the error behind it, decides nothing")
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.corrupt(file: "f", reason: "r"))).code, .dataError)
        XCTAssertEqual(CLIError.from(ExtensionError.failed(VaultError.rolledBack(generation: 1, highestSeen: 2))).code, .dataError)
        XCTAssertEqual(BrowserHostError.from(ExtensionError.failed(VaultError.wrongPassword)).code, "wrongPassword")
    }
}
