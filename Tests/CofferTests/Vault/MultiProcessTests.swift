import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import Foundation
import XCTest

/// Separate writer processes (the test-only `coffer-test-writer`): concurrent writers lose
/// nothing, and a writer killed with SIGKILL at any write step leaves the old state or the new.
final class MultiProcessTests: XCTestCase {
    func writer(_ arguments: [String], crashAt step: Int? = nil) throws -> Process {
        let executable = Fixture.productsDirectory + "/coffer-test-writer"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw XCTSkip("\(executable) is missing; 'swift build' builds it")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = Fixture.containerPath("writer-state")
        if let step { environment["COFFER_TEST_CRASH_AT"] = String(step) }
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((Fixture.password + "\n").utf8))
        try input.fileHandleForWriting.close()
        return process
    }

    /// 4 processes × 125 adds and 2 processes × 100 updates of one record, all at once.
    func testConcurrentAddsAndUpdatesLoseNothing() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft("shared.example"))
        var processes = try (0..<4).map { _ in try writer(["add", vault.container.path, "125"]) }
        processes += try (0..<2).map { _ in try writer(["update", vault.container.path, record.id.hex, "100"]) }
        for process in processes {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
        }
        let reopened = try Fixture.reopen(vault)
        let records = try reopened.allRecords()
        XCTAssertEqual(records.count, 501)
        XCTAssertEqual(Set(records.map(\.user)).count, 5, "one user per adding process, plus the shared record")
        let shared = try reopened.record(withID: record.id)
        XCTAssertEqual(shared.revision, 201)
        XCTAssertEqual(shared.notes.count, 200)
        let report = reopened.verify()
        XCTAssertTrue(report.isClean, "\(report.problems.prefix(5))")
        XCTAssertEqual(try reopened.identityStore.credentialIdentities(for: []).count, 501)
    }

    /// At least 200 writers killed at successive write steps of every kind of operation.
    func testSIGKILLAtEveryWriteStepLeavesOldOrNewState() throws {
        let operations = ["add", "import", "update", "delete"]
        var killed = 0, iterations = 0
        for operation in operations {
            for step in 1... {
                let vault = try Fixture.vault()
                let kept = try vault.add(Fixture.draft("kept.example"))
                let before = try snapshot(vault)
                let arguments: [String] = switch operation {
                case "add": ["add", vault.container.path, "1"]
                case "import": ["import", vault.container.path, "3"]
                case "update": ["update", vault.container.path, kept.id.hex, "1"]
                default: ["delete", vault.container.path, kept.id.hex]
                }
                let process = try writer(arguments, crashAt: step)
                process.waitUntilExit()
                iterations += 1
                let wasKilled = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
                if wasKilled { killed += 1 } else { XCTAssertEqual(process.terminationStatus, 0, "\(operation) step \(step)") }

                let reopened = try Fixture.reopen(vault)  // opening removes the dead writer's temp files
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault.container.temporaryDirectory), [],
                               "\(operation) step \(step): temp file survived")
                let after = try snapshot(reopened)
                let isNew = switch operation {
                case "add": after.count == 2 && after.contains(before[0])
                case "import": after.count == 4 && after.contains(before[0])
                case "update": after.count == 1 && after[0].hasSuffix("x 2")
                default: after.isEmpty
                }
                XCTAssertTrue(after == before || isNew, "\(operation) killed at step \(step) left \(after)")
                let report = reopened.verify()
                XCTAssertTrue(report.isClean, "\(operation) step \(step): \(report.problems)")
                if !wasKilled { break }  // the operation finished before reaching this step
            }
        }
        XCTAssertGreaterThanOrEqual(killed, 25)
        // Repeat the whole sweep until 200 writers were killed in all.
        var rounds = 1
        while killed < 200 && rounds < 40 {
            rounds += 1
            for operation in operations {
                let vault = try Fixture.vault()
                let kept = try vault.add(Fixture.draft("kept.example"))
                let step = Int.random(in: 1...12)
                let arguments = operation == "update" ? ["update", vault.container.path, kept.id.hex, "3"]
                    : operation == "delete" ? ["delete", vault.container.path, kept.id.hex]
                    : [operation, vault.container.path, "5"]
                let process = try writer(arguments, crashAt: step)
                process.waitUntilExit()
                if process.terminationReason == .uncaughtSignal { killed += 1 }
                let reopened = try Fixture.reopen(vault)
                let report = reopened.verify()
                XCTAssertTrue(report.isClean, "\(operation) random step \(step): \(report.problems)")
                XCTAssertNoThrow(try reopened.allRecords())
            }
        }
        print("crash sweep: \(iterations) exhaustive runs, \(killed) writers killed")
    }

    func snapshot(_ vault: Vault) throws -> [String] {
        try Fixture.reopen(vault).allRecords().map { "\($0.id) \($0.password) \($0.notes) \($0.revision)" }
    }
}
