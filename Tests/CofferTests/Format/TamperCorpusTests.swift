import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Runs every case of `Vectors/tamper/` (one file per case, made by the reference generator)
/// against the reference container: each mutation must be detected the way its `expect:` says.
final class TamperCorpusTests: XCTestCase {
    let reference = try! VectorFile.load("vault/vault.vector")  // swiftlint:disable:this force_try

    func testEveryCase() throws {
        let directory = VectorFile.directory + "/tamper"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".vector") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 20)
        for name in names {
            try check(try VectorFile(path: directory + "/" + name))
        }
    }

    func check(_ vector: VectorFile) throws {
        let container = try VaultVectorTests.privateCopy()
        for (key, value) in vector.lines where key != "expect" { try apply(key, value, in: container.path) }
        let expect = vector.string("expect").split(separator: " ").map(String.init)
        let name = vector.name
        let records = ["r0": try RecordID(hex: reference.string("record0_id")), "r1": try RecordID(hex: reference.string("record1_id"))]
        func path(_ token: String) -> String {
            records[token].map(container.recordPath) ?? container.path + "/" + token
        }

        let opened: Vault
        do {
            opened = try Vault.open(container, configuration: Fixture.configuration())
            try opened.unlock(masterPassword: Fixture.secret(reference.string("password")))
        } catch {
            switch (expect[0], error) {
            case ("corrupt-header", VaultError.corrupt(let file, _)): XCTAssertTrue(file.hasSuffix("vault.coffer"), name)
            case ("kdf-out-of-range", VaultError.kdfParametersOutOfRange): break
            default: XCTFail("\(name): expected \(expect), got \(error)")
            }
            return
        }
        XCTAssertFalse(["corrupt-header", "kdf-out-of-range"].contains(expect[0]), "\(name): the header was accepted")
        let report = opened.verify()
        let reported = Set(report.problems.map(\.file))

        switch expect[0] {
        case "corrupt":
            for token in expect.dropFirst() {
                if let id = records[token] {
                    XCTAssertThrows(try opened.record(withID: id), name) { if case VaultError.corrupt = $0 { return true }; return false }
                    XCTAssertFalse(provides(opened, id), "\(name): the provider released \(token)")
                }
                XCTAssertTrue(reported.contains(path(token)), "\(name): verify did not name \(token): \(report.problems)")
            }
        case "missing":
            let id = records[expect[1]]!
            XCTAssertThrows(try opened.record(withID: id), name) { $0 as? VaultError == .recordNotFound(id) }
            XCTAssertTrue(report.problems.contains { $0.file == path(expect[1]) && $0.message.contains("missing") }, name)
            let provider = CredentialProvider(vault: opened, interaction: nil, sessions: nil)
            provider.provideCredentialWithoutUserInteraction(for: identity(opened, of: id))
            XCTAssertEqual(cancellationCode(provider), .credentialIdentityNotFound, name)
        case "identity-mismatch":
            let id = records[expect[1]]!
            XCTAssertTrue(reported.contains(path(expect[1])), "\(name): \(report.problems)")
            let forged = try opened.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "bank.example")])
            XCTAssertEqual(forged.first?.identity.recordIdentifier, id.hex, "\(name): the forged identity is offered")
            let provider = CredentialProvider(vault: opened, interaction: nil, sessions: nil)
            provider.provideCredentialWithoutUserInteraction(for: forged[0].identity)
            XCTAssertEqual(cancellationCode(provider), .failed, name)
        case "corrupt-index":
            XCTAssertThrows(try opened.record(withID: records["r0"]!), name) { if case VaultError.corrupt = $0 { return true }; return false }
            XCTAssertTrue(reported.contains(container.indexDirectory + "/manifest"), "\(name): \(report.problems)")
        case "too-large":
            XCTAssertThrows(try opened.record(withID: records[expect[1]]!), name) {
                if case VaultError.storage(.fileTooLarge) = $0 { return true }
                return false
            }
            XCTAssertTrue(reported.contains(path(expect[1])), name)
        case "verify-reports":
            XCTAssertTrue(reported.contains(path(expect[1])), "\(name): \(report.problems)")
        default:
            XCTFail("\(name): unknown expectation \(expect)")
        }
    }

    func identity(_ vault: Vault, of id: RecordID) -> PasswordCredentialIdentity {
        PasswordCredentialIdentity(serviceIdentifier: CredentialServiceIdentifier(parsing: "example.com"), user: "alice", recordIdentifier: id.hex)
    }

    func cancellationCode(_ provider: CredentialProvider) -> ExtensionError.Code? {
        if case .cancelled(let error)? = provider.extensionContext.outcome { return error.code }
        return nil
    }

    func provides(_ vault: Vault, _ id: RecordID) -> Bool {
        let provider = CredentialProvider(vault: vault, interaction: nil, sessions: nil)
        provider.provideCredentialWithoutUserInteraction(for: identity(vault, of: id))
        if case .completed? = provider.extensionContext.outcome { return true }
        return false
    }

    func apply(_ operation: String, _ argument: String, in container: String) throws {
        let parts = argument.split(separator: " ", maxSplits: 1).map(String.init)
        let file = container + "/" + parts[0]
        switch operation {
        case "flip":
            var bytes = try Fixture.bytes(file)
            let offset = Int(parts[1])!
            bytes[offset < 0 ? bytes.count + offset : offset] ^= 0x01
            try Fixture.write(bytes, to: file)
        case "truncate":
            XCTAssertEqual(truncate(file, off_t(parts[1])!), 0)
        case "write":
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Fixture.write(Hex.decode(parts[1]) ?? [], to: file)
            chmod(file, 0o600)
        case "delete":
            try FileManager.default.removeItem(atPath: file)
        case "sparse":
            let fd = open(file, O_WRONLY | O_TRUNC)
            XCTAssertEqual(ftruncate(fd, off_t(parts[1])!), 0)
            close(fd)
        default:
            XCTFail("unknown mutation \(operation)")
        }
    }
}
