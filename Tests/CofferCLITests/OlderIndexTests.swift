import Coffer
import Foundation
import ScratchDirectories
import XCTest

/// A vault whose index an older Coffer wrote (layout 3: the reference writer's
/// `Vectors/vault-layout3`, zoë's login tagged "work"). Such an index files no tags until the
/// vault key rewrites it (SPEC.md §7.3), so `list --tag` must never answer from it as though no
/// item carried the tag.
final class OlderIndexTests: XCTestCase {
    static let vector = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../CofferTests/Vectors/vault-layout3").standardized.path
    static let password = "correct horse battery staple"

    /// The vector's container with the identity store enabled on this device, locked: the
    /// state of a device that enabled the store before it ran a build that files tags.
    func lockedWithTheStoreEnabled() throws -> CLIHarness {
        let base = ScratchDirectories.make(prefix: "coffer-layout3")
        let cli = CLIHarness(base: base)
        try FileManager.default.copyItem(atPath: Self.vector + "/container", toPath: cli.container)
        chmod(cli.container, 0o700)
        for case let relative as String in FileManager.default.enumerator(atPath: cli.container)! {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: cli.container + "/" + relative, isDirectory: &isDirectory)
            chmod(cli.container + "/" + relative, isDirectory.boolValue ? 0o700 : 0o600)
        }
        let vector = try String(contentsOfFile: Self.vector + "/vault.vector", encoding: .utf8)
        let keyLine = try XCTUnwrap(vector.split(separator: "\n").first { $0.hasPrefix("vault_key: ") })
        let vault = try Vault.open(GroupContainer(path: cli.container), configuration: VaultConfiguration(
            kdfPolicy: .relaxedForTesting, stateDirectory: base + "/state/coffer"))
        try vault.unlock(vaultKey: SecureBytes(copying: try XCTUnwrap(Hex.decode(String(keyLine.dropFirst("vault_key: ".count))))))
        try vault.identityStore.enable()
        vault.lock()
        XCTAssertEqual(try manifestVersion(cli), 3)
        return cli
    }

    func manifestVersion(_ cli: CLIHarness) throws -> UInt8 {
        try Data(contentsOf: URL(fileURLWithPath: cli.container + "/index/manifest"))[7]
    }

    func testListByTagIsNeverAnEmptyAnswerFromAnIndexThatFilesNoTags() throws {
        let cli = try lockedWithTheStoreEnabled()
        XCTAssertEqual(cli.run(["list"]).code, 0, "locked, the store lists the identities it has")

        let refused = cli.run(["list", "--tag", "work"])
        XCTAssertEqual(refused.code, 75, refused.stdout + refused.stderr)
        XCTAssertEqual(refused.stdout, "", "no table that reads as 'no item carries it'")
        XCTAssertTrue(refused.stderr.contains("files no tags yet") && refused.stderr.contains("coffer unlock"), refused.stderr)
        XCTAssertEqual(try manifestVersion(cli), 3, "nothing written while locked")

        let asked = cli.run(["list", "--tag", "work", "--password-stdin"], stdin: Self.password + "\n")
        XCTAssertEqual(asked.code, 0, asked.stderr)
        XCTAssertTrue(asked.stdout.contains("zoë"), "the password unlock filed the tags: " + asked.stdout)
        XCTAssertFalse(asked.stdout.contains("alice"), "alice's login carries no tag: " + asked.stdout)
        XCTAssertEqual(try manifestVersion(cli), 4)
        let again = cli.run(["list", "--tag", "work"])
        XCTAssertTrue(again.code == 0 && again.stdout.contains("zoë"), "locked again, the filed tags are read: " + again.stdout + again.stderr)
    }
}
