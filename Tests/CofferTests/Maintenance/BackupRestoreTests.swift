import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferMaintenance
import Foundation
import XCTest

final class VerifyTests: XCTestCase {
    func testCleanVaultVerifiesAtEveryDepth() throws {
        let vault = try Fixture.vault()
        try vault.add((0..<20).map { Fixture.draft("site\($0).example", user: "u\($0)") })
        let deep = vault.verify()
        XCTAssertTrue(deep.isClean, "\(deep.problems)")
        XCTAssertEqual(deep.recordCount, 20)
        XCTAssertTrue(deep.checkedContents)

        let locked = try Fixture.open(vault).verify()
        XCTAssertTrue(locked.isClean, "\(locked.problems)")
        XCTAssertTrue(locked.checkedIndex, "the device key reads the index while locked")
        XCTAssertFalse(locked.checkedContents)
    }

    func testEachKindOfDamageIsNamedWithItsFile() throws {
        let vault = try Fixture.vault()
        let records = try vault.add((0..<5).map { Fixture.draft("site\($0).example") })
        let paths = records.map { vault.container.recordPath($0.id) }
        let old = try Fixture.bytes(paths[2])
        try vault.updateRecord(withID: records[2].id) { $0.password = "newer" }

        var flipped = try Fixture.bytes(paths[0])
        flipped[100] ^= 1
        try Fixture.write(flipped, to: paths[0])                          // bit flip
        try FileManager.default.removeItem(atPath: paths[1])              // deletion
        try Fixture.write(old, to: paths[2])                               // rollback of one record
        try Fixture.write(Array(try Fixture.bytes(paths[3]).prefix(100)), to: paths[3])  // truncation
        chmod(paths[4], 0o644)                                            // permissions
        try Fixture.write([1, 2, 3], to: vault.container.recordsDirectory + "/zz")  // a stray

        let report = vault.verify()
        let files = Set(report.problems.map(\.file))
        for path in paths { XCTAssertTrue(files.contains(path), "no problem reported for \(path): \(report.problems)") }
        XCTAssertTrue(files.contains(vault.container.recordsDirectory + "/zz"))
        XCTAssertTrue(report.problems.contains { $0.file == paths[1] && $0.message.contains("missing") })
        XCTAssertTrue(report.problems.contains { $0.file == paths[2] && $0.message.contains("rolled back") })
    }

    func testSwappedRecordsAndForeignRecordsAreReported() throws {
        let vault = try Fixture.vault()
        let a = try vault.add(Fixture.draft("a.example")), b = try vault.add(Fixture.draft("b.example"))
        let (pathA, pathB) = (vault.container.recordPath(a.id), vault.container.recordPath(b.id))
        let bytesA = try Fixture.bytes(pathA)
        try Fixture.write(try Fixture.bytes(pathB), to: pathA)
        try Fixture.write(bytesA, to: pathB)
        let report = vault.verify()
        XCTAssertEqual(Set(report.problems.map(\.file)), [pathA, pathB])
    }
}

final class BackupRestoreTests: XCTestCase {
    func testTarBackupIsReadableByGNUTarAndRestoresOnANewDevice() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft("backup.example", user: "dora", password: "BackupSecret"))
        let tar = Fixture.containerPath("backup.tar")
        XCTAssertEqual(try VaultBackup.backup(vault, to: tar), 1)
        let listing = try run("/bin/tar", ["-tf", tar])
        XCTAssertTrue(listing.contains("vault.coffer"), listing)
        XCTAssertTrue(listing.contains("records/\(record.id.hex.prefix(2))/\(record.id.hex)"), listing)
        XCTAssertFalse(String(decoding: try Fixture.bytes(tar), as: UTF8.self).contains("BackupSecret"))

        let target = GroupContainer(path: Fixture.containerPath("restored"))
        try VaultBackup.restore(from: tar, into: target, replacing: false)
        var configuration = Fixture.configuration()
        configuration.stateDirectory = Fixture.containerPath("fresh-device")
        let restored = try Vault.open(target, configuration: configuration)
        XCTAssertFalse(restored.identityStore.state.isEnabled, "a new device starts unconfigured")
        try restored.unlock(masterPassword: Fixture.secret())
        XCTAssertTrue(restored.identityStore.state.isEnabled)
        XCTAssertEqual(try restored.identityStore.credentialIdentities(for: [CredentialServiceIdentifier(parsing: "backup.example")]).map(\.identity.user), ["dora"])
        XCTAssertEqual(try restored.record(withID: record.id).password, "BackupSecret")
        XCTAssertTrue(restored.verify().isClean)
    }

    func testPlainCopiesAreValidBackups() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft("copy.example"))
        let copy = Fixture.containerPath("cp-a")
        _ = try run("/bin/cp", ["-a", vault.container.path, copy])
        let tarball = Fixture.containerPath("gnu.tar")
        _ = try run("/bin/tar", ["-cf", tarball, "-C", vault.container.path, "."])
        for source in [copy, tarball] {
            let target = GroupContainer(path: Fixture.containerPath("from-copy"))
            try VaultBackup.restore(from: source, into: target, replacing: false)
            let restored = try Vault.open(target, configuration: vault.configuration)
            try restored.unlock(masterPassword: Fixture.secret())
            let report = restored.verify()
            XCTAssertTrue(report.isClean, "\(source): \(report.problems)")
            XCTAssertEqual(report.recordCount, 1)
        }
    }

    func testRestoreRefusesANonEmptyTargetUnlessForced() throws {
        let vault = try Fixture.vault()
        try vault.add(Fixture.draft())
        let backup = Fixture.containerPath("dir-backup")
        try VaultBackup.backup(vault, to: backup)
        let other = try Fixture.vault()
        XCTAssertThrows(try VaultBackup.restore(from: backup, into: other.container, replacing: false)) {
            if case VaultError.vaultExists = $0 { return true }
            return false
        }
        XCTAssertEqual(try Fixture.reopen(other).vaultID, other.vaultID, "the refused target is untouched")
        try VaultBackup.restore(from: backup, into: other.container, replacing: true)
        XCTAssertEqual(try Vault.open(other.container, configuration: vault.configuration).vaultID, vault.vaultID)
        XCTAssertThrows(try VaultBackup.backup(vault, to: backup)) { _ in true }  // never overwrites
    }

    func testMaliciousArchivesAreRefused() throws {
        let escape = try TarArchive.encode([
            .init(path: "vault.coffer", kind: .file, mode: 0o600, contents: [1]),
            .init(path: "../escape", kind: .file, mode: 0o600, contents: [1]),
        ])
        let stray = try TarArchive.encode([
            .init(path: "vault.coffer", kind: .file, mode: 0o600, contents: [1]),
            .init(path: "records/ab/not-an-id", kind: .file, mode: 0o600, contents: [1]),
        ])
        let gzip = try BackupCompression.gzip.compress(escape)
        let zstd = try BackupCompression.zstd.compress(stray)
        let cases: [(String, [UInt8])] = [
            ("escape.tar", escape), ("stray.tar", stray), ("garbage.tar", [UInt8](repeating: 7, count: 1024)),
            ("escape.tar.gz", gzip), ("stray.tar.zst", zstd), ("truncated.tar.gz", Array(gzip.prefix(gzip.count / 2))),
            ("truncated.tar.zst", Array(zstd.prefix(zstd.count - 3))), ("flipped.tar.gz", gzip.enumerated().map { $0 == 20 ? $1 ^ 1 : $1 }),
        ]
        for (name, bytes) in cases {
            let path = Fixture.containerPath(name)
            try Fixture.write(bytes, to: path)
            let target = Fixture.containerPath("target")
            XCTAssertThrows(try VaultBackup.restore(from: path, into: GroupContainer(path: target), replacing: false), name) { _ in true }
            XCTAssertFalse(FileManager.default.fileExists(atPath: target + "/vault.coffer"), name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: (target as NSString).deletingLastPathComponent + "/escape"))
        }
    }

    /// An entry larger than any file of its kind is refused before it is written, nothing restored.
    func testAnEntryLargerThanItsKindIsRefused() throws {
        let id = try RecordID.random()
        let tar = try TarArchive.encode([
            .init(path: "vault.coffer", kind: .file, mode: 0o600, contents: [1]),
            .init(path: "records/\(id.hex.prefix(2))/\(id.hex)", kind: .file, mode: 0o600,
                  contents: [UInt8](repeating: 0, count: RecordEnvelope.maximumFileLength + 1)),
        ])
        let path = Fixture.containerPath("large.tar")
        try Fixture.write(tar, to: path)
        let target = Fixture.containerPath("target")
        XCTAssertThrows(try VaultBackup.restore(from: path, into: GroupContainer(path: target), replacing: false)) {
            guard case VaultError.corrupt(_, let reason) = $0 else { return false }
            return reason.contains("more than any such file")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))
    }

    /// A size past ustar's 11 octal digits (an attachment over 8 GiB) is written in GNU's base-256
    /// form, byte for byte as Python's tarfile writes it, and read back from Python's header.
    func testSizesPastUstarsOctalDigitsAreGNUBase256() throws {
        let size: UInt64 = 9 << 30
        let ours = TarArchive.block(for: .init(path: "attachments/ab/big", kind: .file, mode: 0o600, size: size), modificationTime: 0)
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", """
        import sys, tarfile
        info = tarfile.TarInfo("attachments/ab/big"); info.size = \(size); info.mode = 0o600; info.mtime = 0
        block = info.tobuf(format=tarfile.GNU_FORMAT)
        sys.stdout.write(block[124:136].hex() + "\\n")
        parsed = tarfile.TarInfo.frombuf(bytes.fromhex(sys.argv[1]), "utf-8", "strict")
        sys.stdout.write(str(parsed.size) + "\\n")
        sys.stdout.write(block.hex())
        """, ours.map { String(format: "%02x", $0) }.joined()]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        python.waitUntilExit()
        XCTAssertEqual(python.terminationStatus, 0)
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[0], ours[124..<136].map { String(format: "%02x", $0) }.joined(), "the size field as GNU writes it")
        XCTAssertEqual(lines[1], String(size), "Python reads our header's size")
        let theirs = stride(from: 0, to: lines[2].count, by: 2).map { offset -> UInt8 in
            let start = lines[2].index(lines[2].startIndex, offsetBy: offset)
            return UInt8(lines[2][start..<lines[2].index(start, offsetBy: 2)], radix: 16)!
        }
        XCTAssertEqual(try TarArchive.parse(theirs, at: 0)?.size, size, "we read Python's")
    }

    /// Two writer processes keep adding while backups are taken (plain, gzip and zstd in turn):
    /// each backup is one consistent generation (its index agrees with its records), and
    /// verifies clean as a backup — older than the device has seen by then, which is not damage.
    func testBackupWhileTwoProcessesWrite() throws {
        let vault = try Fixture.vault()
        let writers = try (0..<2).map { _ in try startWriter(vault, count: 60) }
        var backups: [String] = []
        while writers.contains(where: \.isRunning) {
            let destination = Fixture.containerPath("live-\(backups.count).\(["tar", "tar.gz", "tar.zst"][backups.count % 3])")
            try VaultBackup.backup(vault, to: destination)
            backups.append(destination)
        }
        for writer in writers { XCTAssertEqual(writer.terminationStatus, 0) }
        XCTAssertGreaterThan(backups.count, 1)
        // Each is restored and verified twice, which costs far more than taking it: eight of
        // them, spread over the writers' run (the first and the last among them), are checked.
        let checked = backups.count <= 8 ? backups : (0..<8).map { backups[$0 * (backups.count - 1) / 7] }
        for tar in checked {
            let target = GroupContainer(path: Fixture.containerPath("check"))
            try VaultBackup.restore(from: tar, into: target, replacing: false)
            let restored = try Vault.open(target, configuration: vault.configuration)
            let report = restored.verify(asBackup: true)
            XCTAssertTrue(report.isClean && report.checkedIndex, "\(tar): \(report.problems.prefix(3))")
            XCTAssertEqual(restored.verify().isClean, report.olderThanSeen == nil, "\(tar): the same age in a live vault is a rollback")
            try FileManager.default.removeItem(atPath: target.path)
        }
    }

    func startWriter(_ vault: Vault, count: Int) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixture.productsDirectory + "/coffer-test-writer")
        process.arguments = ["add", vault.container.path, String(count)]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data((Fixture.password + "\n").utf8))
        try input.fileHandleForWriting.close()
        return process
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(tool) \(arguments)")
        return String(decoding: data, as: UTF8.self)
    }
}

/// The compressions of backups against the real gzip and zstd formats, and their limits.
final class BackupCompressionTests: XCTestCase {
    func testNamesChooseTheFormatAndBytesAreDetected() throws {
        XCTAssertEqual(BackupCompression.forName("a.tar"), BackupCompression.none)
        XCTAssertEqual(BackupCompression.forName("a.TGZ"), .gzip)
        XCTAssertEqual(BackupCompression.forName("a.tar.zst"), .zstd)
        XCTAssertNil(BackupCompression.forName("backups/2026-12-03"))
        for other in ["a.zip", "a.tar.xz", "a.tar.bz2", "a.gz", "a.zst", "a.7z"] {
            XCTAssertTrue(BackupCompression.looksLikeOtherArchive(other), other)
        }
        XCTAssertFalse(BackupCompression.looksLikeOtherArchive("coffer-2026.12.03"))
        let data = Array("a vault, compressed".utf8)
        for compression in [BackupCompression.gzip, .zstd] {
            let packed = try compression.compress(data)
            XCTAssertEqual(BackupCompression.detect(packed), compression)
            XCTAssertEqual(try compression.decompress(packed, limit: 1 << 20), data)
        }
    }

    func testADecompressionBombIsRefusedAtTheLimit() throws {
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        for compression in [BackupCompression.gzip, .zstd] {
            let bomb = try compression.compress(zeros)
            XCTAssertLessThan(bomb.count, 64 << 10)
            XCTAssertThrows(try compression.decompress(bomb, limit: 1 << 20), "\(compression)") { $0 as? CompressionError == .tooLarge(1 << 20) }
        }
    }

    /// GNU tar and gzip/zstd read what Coffer writes, and Coffer reads what they write.
    func testGNUToolsReadOursAndWeReadTheirs() throws {
        let data = Array((0..<100_000).map { UInt8($0 % 251) })
        let directory = Fixture.containerPath("compression")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (compression, tool) in [(BackupCompression.gzip, "/usr/bin/gzip"), (.zstd, "/usr/bin/zstd")] {
            guard FileManager.default.isExecutableFile(atPath: tool) else { continue }
            let path = directory + "/data." + (compression == .gzip ? "gz" : "zst")
            try Fixture.write(compression.compress(data), to: path)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = ["-d", "-c", path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let decoded = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            XCTAssertEqual(Array(decoded), data, tool)
        }
    }
}
