@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Coffer
import Foundation
import XCTest

/// Exit codes are decided by types (issue 52, item 6; SPEC.md §10): every error type declared in
/// the sources states its code through `CommandFailure`, in `Support/CommandFailure.swift`; a
/// new error type without one fails here, before a user meets exit 70 for it.
final class ExitCodeCoverageTests: XCTestCase {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources").path

    /// Internal error types that never leave their module (each is caught and rethrown as one
    /// that conforms), with where they are caught.
    static let neverLeaveTheirModule: [String: String] = [
        "TarArchive.DecodeError": "VaultBackup.extract rethrows it as VaultError.corrupt",
        "CSV.ParseError": "the CSV readers rethrow it as ImportError.malformed",
        "SecretServiceFault": "the Secret Service answers it as a D-Bus error reply",
        "TPMCommands.Failure": "quick unlock turns it into TPMQuickUnlockError or a PIN outcome",
    ]

    /// `Outer.Inner` names of every type whose inheritance clause lists `Error`.
    func declaredErrorTypes() throws -> [(name: String, isPublic: Bool, file: String)] {
        var found: [(String, Bool, String)] = []
        let enumerator = FileManager.default.enumerator(atPath: Self.sources)
        let declaration = try NSRegularExpression(pattern: #"^(\s*)(public |package )?(?:final )?(?:struct|enum|class) (\w+)[^{]*:\s*([^{]*)\{"#)
        let container = try NSRegularExpression(pattern: #"^(\s*)(?:public |package )?(?:final )?(?:struct|enum|class|extension) (\w+(?:\.\w+)*)"#)
        while let path = enumerator?.nextObject() as? String {
            // scripts/check-layers plants and removes LayerProbe.swift beside the running tests.
            guard path.hasSuffix(".swift"), !path.hasSuffix("/LayerProbe.swift") else { continue }
            let lines = try String(contentsOfFile: Self.sources + "/" + path, encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                guard let match = declaration.firstMatch(in: line, range: range) else { continue }
                let inherits = (line as NSString).substring(with: match.range(at: 4))
                guard inherits.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "Error" }) else { continue }
                let indent = match.range(at: 1).length
                var name = (line as NSString).substring(with: match.range(at: 3))
                // Nested: the nearest less-indented type or extension above names its outer type.
                if indent > 0 {
                    for above in lines[..<index].reversed() {
                        let aboveRange = NSRange(above.startIndex..., in: above)
                        if let outer = container.firstMatch(in: above, range: aboveRange), outer.range(at: 1).length < indent {
                            name = (above as NSString).substring(with: outer.range(at: 2)) + "." + name
                            break
                        }
                    }
                }
                found.append((name, match.range(at: 2).location != NSNotFound, path))
            }
        }
        return found
    }

    func testEveryErrorTypeStatesItsExitCode() throws {
        // The library's error types conform in the terminal kit, the CLI's own features' in the CLI.
        let conformances = try ["/CofferTerminalKit/CommandFailure.swift", "/CofferCLI/Support/CommandFailure.swift"]
            .map { try String(contentsOfFile: Self.sources + $0, encoding: .utf8) }.joined()
        let types = try declaredErrorTypes()
        XCTAssertGreaterThan(types.count, 30, "the scan finds the sources' error types")
        for type in types {
            if let reason = Self.neverLeaveTheirModule[type.name] {
                XCTAssertFalse(type.isPublic, "\(type.name) is public, so it can reach a command: it needs a CommandFailure conformance (\(reason))")
                continue
            }
            XCTAssertTrue(conformances.contains("extension \(type.name): CommandFailure"),
                          "\(type.name) (\(type.file)) states no exit code: add it to Sources/CofferTerminalKit/CommandFailure.swift (or the CLI's, for its own features)")
        }
    }

    /// The codes SPEC.md §10 names for what an issue found wrong: a missing program is 69, a
    /// program that failed 71 — never 65 or 70 by where it was caught.
    func testAMissingProgramIs69AndAFailedOne71() {
        XCTAssertEqual(CLIError.from(ImportError.programMissing(program: "gpg", package: "gnupg")).code, .unavailable)
        XCTAssertEqual(CLIError.from(ImportError.programFailed(location: "a.gpg", program: "gpg", status: 2)).code, .osError)
        XCTAssertEqual(CLIError.from(ChildProcessError.launch("gpg", ENOENT)).code, .unavailable)
        XCTAssertEqual(CLIError.from(VaultError.crypto(.authenticationFailed)).code, .dataError)
        struct Unstated: Error {}
        XCTAssertEqual(CLIError.from(Unstated()).code, .software, "a type that states nothing is a bug")
    }
}
