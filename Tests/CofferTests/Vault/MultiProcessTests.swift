@testable import Coffer
import Foundation
import XCTest

/// Concurrent writers in separate processes lose nothing (promise 4).
final class MultiProcessTests: XCTestCase {
    func runWriters(_ argumentLists: [[String]]) throws {
        let executable = Fixture.productsDirectory + "/coffer-test-writer"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            XCTFail("\(executable) is missing; 'swift build' builds it")
            return
        }
        var processes: [Process] = []
        for arguments in argumentLists {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let input = Pipe()
            process.standardInput = input
            try process.run()
            input.fileHandleForWriting.write(Data((Fixture.password + "\n").utf8))
            try input.fileHandleForWriting.close()
            processes.append(process)
        }
        for process in processes {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
        }
    }

    func testFourProcessesAdding250EachLeave1000ReadableRecords() throws {
        let vault = try Fixture.vault()
        try runWriters(Array(repeating: ["add", vault.container.path, "250"], count: 4))
        let records = try Fixture.reopen(vault).allRecords()
        XCTAssertEqual(records.count, 1000)
        XCTAssertEqual(Set(records.map(\.user)).count, 4, "one user name per writer process")
    }

    func testTwoProcessesUpdatingOneRecordLoseNoUpdate() throws {
        let vault = try Fixture.vault()
        let record = try vault.add(Fixture.draft())
        try runWriters(Array(repeating: ["update", vault.container.path, record.id.hex, "200"], count: 2))
        let final = try Fixture.reopen(vault).record(withID: record.id)
        XCTAssertEqual(final.revision, 401)
        XCTAssertEqual(final.notes.count, 400)
    }
}
