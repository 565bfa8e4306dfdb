import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

final class ContainerSecurityTests: XCTestCase {
    func testNewContainerAndParentsAre0700() throws {
        let path = Fixture.containerPath("a/b/vault")
        _ = try Vault.create(in: GroupContainer(path: path), masterPassword: Fixture.secret(), kdf: KDFPolicy.testingParameters, configuration: Fixture.configuration())
        for directory in [path, path + "/..", path + "/../.."] {
            var info = stat()
            stat(directory, &info)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, directory)
        }
    }

    func testGroupOrWorldAccessibleContainerIsRefused() throws {
        let vault = try Fixture.vault()
        for mode: mode_t in [0o750, 0o705, 0o777] {
            chmod(vault.container.path, mode)
            XCTAssertThrows(try Fixture.open(vault), "mode \(String(mode, radix: 8))") {
                if case VaultError.storage(.insecurePermissions) = $0 { return true }
                return false
            }
        }
        chmod(vault.container.path, 0o700)
        XCTAssertNoThrow(try Fixture.open(vault))
    }

    func testSymlinkedContainerIsRefused() throws {
        let vault = try Fixture.vault()
        let link = vault.container.path + "-link"
        XCTAssertEqual(symlink(vault.container.path, link), 0)
        XCTAssertThrows(try Vault.open(GroupContainer(path: link), configuration: Fixture.configuration())) {
            if case VaultError.storage(.symbolicLink) = $0 { return true }
            return false
        }
    }

    func testContainerOwnedBySomeoneElseIsRefused() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to chown") }
        let vault = try Fixture.vault()
        XCTAssertEqual(chown(vault.container.path, 65534, 65534), 0)
        XCTAssertThrows(try Fixture.open(vault)) {
            if case VaultError.storage(.wrongOwner(_, 65534)) = $0 { return true }
            return false
        }
    }

    func testContainerThatIsAFileIsRefused() throws {
        let path = Fixture.containerPath()
        try Fixture.write([0], to: path)
        XCTAssertThrows(try Vault.open(GroupContainer(path: path))) {
            if case VaultError.storage(.wrongFileType) = $0 { return true }
            return false
        }
    }

    /// A FIFO, a symlink or a directory where a record or shard should be is refused with an
    /// error, never read, and never blocks the reader.
    func testOddFilesAreRefusedWithoutBlocking() throws {
        let path = Fixture.containerPath("odd")
        let directory = try FileSystem.standard.openDirectory(atPath: path, create: true, createParents: true)
        XCTAssertEqual(mkfifo(path + "/fifo", 0o600), 0)
        XCTAssertEqual(symlink("/etc/passwd", path + "/link"), 0)
        try FileSystem.standard.makeDirectory("dir", in: directory)
        try Fixture.write([1, 2, 3], to: path + "/file")
        for name in ["fifo", "link", "dir"] {
            XCTAssertThrowsError(try FileSystem.standard.readFile(name, in: directory, limit: 100), name)
        }
        XCTAssertThrows(try FileSystem.standard.readFile("link", in: directory, limit: 100)) {
            if case StorageError.symbolicLink = $0 { return true }
            return false
        }
        XCTAssertEqual(try FileSystem.standard.readFile("file", in: directory, limit: 100), [1, 2, 3])
        XCTAssertThrows(try FileSystem.standard.readFile("file", in: directory, limit: 2)) {
            if case StorageError.fileTooLarge = $0 { return true }
            return false
        }
        for name in ["..", ".", "a/b", ""] {
            XCTAssertThrows(try FileSystem.standard.readFile(name, in: directory, limit: 100), name) {
                if case StorageError.unsafeName = $0 { return true }
                return false
            }
        }
    }
}
