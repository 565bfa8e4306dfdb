import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// Interruptions that speak (issue 49, item 7): Ctrl-C during an import says that nothing was
/// imported (exit 130), and the command after a `kill -9` says it is finishing the cut-short
/// write instead of waiting without a word.
final class InterruptionTests: XCTestCase {
    var home = ""
    var environment: [String: String] = [:]

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.path + "/coffer-interrupt-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        environment = ["HOME": home, "XDG_STATE_HOME": home + "/state", "COFFER_CONTAINER": home + "/vault", "COFFER_AGENT": "off",
                       "PATH": "/usr/bin:/bin"]
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["init", "--kdf", "interactive", "--password-stdin"], stdin: "master\n", environment: environment).code, 0)
        var csv = "name,url,username,password,note\n"
        for number in 0..<20_000 { csv += "site\(number),https://site\(number).example.com,user\(number),pw\(number),\n" }
        try csv.write(toFile: home + "/big.csv", atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: home) }

    /// Starts `coffer import big.csv`; returns it once its report is on stderr (the write is next).
    func startImport() throws -> (Process, FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: EndToEndTests.binary)
        process.arguments = ["import", home + "/big.csv", "--password-stdin"]
        process.environment = environment
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data("master\n".utf8))
        try input.fileHandleForWriting.close()
        return (process, errors.fileHandleForReading)
    }

    func testCtrlCDuringAnImportSaysNothingWasImported() throws {
        let (process, errors) = try startImport()
        var seen = ""
        let deadline = Date().addingTimeInterval(60)
        while !seen.contains("→"), Date() < deadline {
            let chunk = errors.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertTrue(seen.contains("→"), "the report came: \(seen)")
        kill(process.processIdentifier, SIGINT)
        seen += String(decoding: errors.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "it ended by itself, not killed by the signal")
        XCTAssertEqual(process.terminationStatus, 130, seen)
        XCTAssertTrue(seen.contains("interrupted: nothing was imported"), seen)
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["list"], environment: environment).stdout, "", "nothing was imported")
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["verify"], environment: environment).code, 0)
    }

    func testTheCommandAfterAKillSaysItFinishesTheWrite() throws {
        let (process, errors) = try startImport()
        let journal = home + "/vault/index/journal"
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: journal), process.isRunning, Date() < deadline { usleep(2_000) }
        XCTAssertTrue(process.isRunning, "the import was killed while its write was in progress")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = errors.readDataToEndOfFile()
        let list = try runTool(EndToEndTests.binary, ["list"], environment: environment)
        XCTAssertEqual(list.code, 0, list.stderr)
        XCTAssertTrue(list.stderr.contains("finishing an interrupted write"), list.stderr)
        XCTAssertEqual(list.stdout, "", "the cut-short import is undone whole")
        let again = try runTool(EndToEndTests.binary, ["list"], environment: environment)
        XCTAssertEqual(again.stderr, "", "said once: the write is finished")
        XCTAssertEqual(try runTool(EndToEndTests.binary, ["verify"], environment: environment).code, 0)
    }

    /// `kill -9` while `coffer attach` streams a file (issue 57): the item is unchanged, the vault
    /// verifies clean, and the half-written file goes with the next write.
    func testAnAttachKilledMidWayLeavesTheItemAsItWas() throws {
        let run = { (arguments: [String], stdin: String) in try runTool(EndToEndTests.binary, arguments, stdin: stdin, environment: self.environment) }
        XCTAssertEqual(try run(["add", "example.com", "alice", "--password-stdin"], "master\npw\n").code, 0)
        let big = home + "/big.bin"
        FileManager.default.createFile(atPath: big, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for _ in 0..<400 { handle.write(block) }
        try handle.close()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: EndToEndTests.binary)
        process.arguments = ["attach", "example.com", big, "--password-stdin"]
        process.environment = environment.merging(["COFFER_ATTACHMENT_LIMIT": "1G"]) { $1 }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data("master\n".utf8))
        try input.fileHandleForWriting.close()
        // Killed once the sealed file is growing in incoming/.
        let incoming = home + "/vault/incoming"
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            let partial = (try? FileManager.default.contentsOfDirectory(atPath: incoming))?.first { $0.hasSuffix(".partial") }
            if let partial, let size = (try? FileManager.default.attributesOfItem(atPath: incoming + "/" + partial))?[.size] as? Int, size > 1 << 20 { break }
            usleep(1000)
        }
        XCTAssertTrue(process.isRunning, "killed mid-way, not after")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)

        let verified = try run(["verify", "--password-stdin"], "master\n")
        XCTAssertEqual(verified.code, 0, verified.stderr)
        let shown = try run(["show", "example.com", "--json", "--password-stdin"], "master\n")
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(record["revision"] as? Int, 1, "the item is unchanged")
        XCTAssertEqual((record["attachments"] as? [Any])?.count, 0)
        XCTAssertEqual(try run(["add", "other.example", "bob", "--password-stdin"], "master\npw\n").code, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: incoming), [], "the next write removed the partial file")
    }
}
