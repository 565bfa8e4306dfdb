@testable import Coffer
import XCTest

/// Every write step can fail (a full disk, a dying device): the vault must keep the old state
/// or the new one, never a torn one, and must stay usable.
final class FaultInjectionTests: XCTestCase {
    typealias Operation = (Vault, RecordID) throws -> Void

    let operations: [(String, Operation)] = [
        ("add", { vault, _ in try vault.add(Fixture.draft("new.example")) }),
        ("bulk add", { vault, _ in try vault.add([Fixture.draft("x.example"), Fixture.draft("y.example")]) }),
        ("update", { vault, id in try vault.updateRecord(withID: id) { $0.password = "changed" } }),
        ("delete", { vault, id in try vault.deleteRecord(withID: id) }),
    ]

    func testEveryOperationIsAllOrNothingAtEveryStep() throws {
        for (name, operation) in operations {
            let steps = try stepCount(of: operation)
            XCTAssertGreaterThan(steps, 0, name)
            for step in 1...steps {
                let faults = FaultInjector(failAt: nil)
                let vault = try Fixture.vault(fileSystem: FileSystem(faults: faults))
                let kept = try vault.add(Fixture.draft("kept.example"))
                let before = try snapshot(vault)
                faults.arm(failAt: step)
                XCTAssertThrows(try operation(vault, kept.id), "\(name) step \(step)") {
                    if case VaultError.storage(.injectedFault) = $0 { return true }
                    return false
                }
                faults.arm(failAt: nil)
                XCTAssertEqual(try snapshot(vault), before, "\(name) failing at step \(step) changed the vault")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vault.container.temporaryDirectory), [],
                               "temp file left by \(name) step \(step)")
                // And the vault still works afterwards.
                try operation(vault, kept.id)
                XCTAssertNotEqual(try snapshot(vault), before, "\(name) without a fault")
            }
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

    /// Ids and decrypted contents of every record, through a fresh open.
    func snapshot(_ vault: Vault) throws -> [String] {
        try Fixture.reopen(vault).allRecords().map { "\($0.id) \($0.password) \($0.revision)" }
    }
}
