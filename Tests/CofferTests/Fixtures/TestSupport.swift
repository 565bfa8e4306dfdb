import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import ScratchDirectories
import XCTest

/// Shared fixtures: throw-away containers and cheap vaults (KDF lowered through the API).
enum Fixture {
    static let password = "correct horse battery staple"

    static func secret(_ text: String = password) -> SecureBytes {
        // Test inputs are valid by construction; a failure here is a broken test machine.
        guard let bytes = try? SecureBytes(copying: Array(text.utf8)) else { fatalError("sodium_malloc failed") }
        return bytes
    }

    /// A fresh, not yet existing container path under a private temp directory (removed when
    /// the test process exits).
    static func containerPath(_ name: String = "vault") -> String {
        ScratchDirectories.make(prefix: "coffer-tests") + "/" + name
    }

    /// Relaxed KDF policy and a private device-state directory.
    static func configuration(fileSystem: FileSystem = .standard) -> VaultConfiguration {
        VaultConfiguration(kdfPolicy: .relaxedForTesting, fileSystem: fileSystem, stateDirectory: containerPath("state"))
    }

    static func vault(fileSystem: FileSystem = .standard) throws -> Vault {
        try Vault.create(
            in: GroupContainer(path: containerPath()), masterPassword: secret(), kdf: KDFPolicy.testingParameters,
            configuration: configuration(fileSystem: fileSystem))
    }

    /// The same vault opened again (locked) with the same device state.
    static func open(_ vault: Vault) throws -> Vault {
        try Vault.open(vault.container, configuration: vault.configuration)
    }

    static func draft(_ service: String = "example.com", user: String = "alice", password: String = "hunter2") -> RecordDraft {
        RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: service, type: .domain)], user: user, password: password)
    }

    static func reopen(_ vault: Vault) throws -> Vault {
        let reopened = try Vault.open(vault.container, configuration: vault.configuration)
        try reopened.unlock(masterPassword: secret())
        return reopened
    }

    /// Every regular file under `path`, recursively.
    static func allFiles(under path: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        return enumerator.compactMap { $0 as? String }.map { path + "/" + $0 }.filter { file in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The directory holding the built products (test bundle, executables).
    static var productsDirectory: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    }
}

/// Asserts that `body` throws an error matching `predicate`.
func XCTAssertThrows<T>(
    _ body: @autoclosure () throws -> T, _ message: String = "", file: StaticString = #filePath, line: UInt = #line,
    where predicate: (Error) -> Bool
) {
    do {
        _ = try body()
        XCTFail("expected an error. \(message)", file: file, line: line)
    } catch {
        XCTAssertTrue(predicate(error), "unexpected error \(error). \(message)", file: file, line: line)
    }
}

/// True for `.corrupt` and the header's other rejections.
func isRejected(_ error: Error) -> Bool {
    switch error {
    case VaultError.corrupt, VaultError.kdfParametersOutOfRange, VaultError.wrongPassword: true
    default: false
    }
}
