@testable import Coffer
import XCTest

/// Every write step can fail (a full disk, a dying device): the vault must end in the old state
/// or the new one, never a torn one, with the index agreeing with the records, and stay usable.
final class FaultInjectionTests: XCTestCase {
    typealias Operation = (Vault, RecordID) throws -> Void

    struct Case {
        let name: String
        let operation: Operation
        /// Whether a snapshot is the operation's complete result, given the one before.
        let isDone: (_ before: [String], _ after: [String]) -> Bool
    }

    let cases: [Case] = [
        Case(name: "add", operation: { vault, _ in try vault.add(Fixture.draft("new.example")) }) { before, after in
            after.count == before.count + 1 && Set(before).isSubset(of: after)
        },
        Case(name: "bulk add", operation: { vault, _ in try vault.add([Fixture.draft("x.example"), Fixture.draft("y.example")]) }) {
            before, after in after.count == before.count + 2 && Set(before).isSubset(of: after)
        },
        Case(name: "update", operation: { vault, id in try vault.updateRecord(withID: id) { $0.password = "changed" } }) { _, after in
            after.count == 1 && after[0].hasSuffix("changed 2")
        },
        Case(name: "delete", operation: { vault, id in try vault.deleteRecord(withID: id) }) { _, after in after.isEmpty },
    ]

    func testEveryOperationEndsOldOrNewAtEveryFailingStep() throws {
        for testCase in cases {
            let steps = try stepCount(of: testCase.operation)
            XCTAssertGreaterThan(steps, 3, testCase.name)
            var sawOld = false, sawNew = false
            for step in 1...steps {
                let faults = FaultInjector(failAt: nil)
                let vault = try Fixture.vault(fileSystem: FileSystem(faults: faults))
                let kept = try vault.add(Fixture.draft("kept.example"))
                let before = try snapshot(vault)
                faults.arm(failAt: step)
                XCTAssertThrows(try testCase.operation(vault, kept.id), "\(testCase.name) step \(step)") {
                    if case VaultError.storage(.injectedFault) = $0 { return true }
                    return false
                }
                faults.arm(failAt: nil)
                let after = try snapshot(vault)  // a checked read: the index must agree with the records
                let isOld = after == before, isNew = testCase.isDone(before, after)
                XCTAssertTrue(isOld || isNew, "\(testCase.name) failing at step \(step) left \(after)")
                sawOld = sawOld || isOld
                sawNew = sawNew || isNew
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault.container.temporaryDirectory), [],
                               "temp file left by \(testCase.name) step \(step)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: vault.container.indexDirectory + "/journal"))
                if isOld {  // the vault still works: the operation succeeds now
                    try testCase.operation(vault, kept.id)
                    XCTAssertTrue(testCase.isDone(before, try snapshot(vault)), "\(testCase.name) after a failure at step \(step)")
                }
            }
            XCTAssertTrue(sawOld, "\(testCase.name): an early failure keeps the old state")
        }
    }

    /// How many mutating file steps an operation takes on a fresh vault with one record.
    func stepCount(of operation: Operation) throws -> Int {
        let faults = FaultInjector(failAt: nil)
        let vault = try Fixture.vault(fileSystem: FileSystem(faults: faults))
        let record = try vault.add(Fixture.draft("kept.example"))
        faults.arm(failAt: nil)
        try operation(vault, record.id)
        return faults.steps
    }

    /// Ids and decrypted contents of every record, read through the index check in a fresh open.
    func snapshot(_ vault: Vault) throws -> [String] {
        try Fixture.reopen(vault).allRecords().map { "\($0.id) \($0.password) \($0.revision)" }
    }
}
