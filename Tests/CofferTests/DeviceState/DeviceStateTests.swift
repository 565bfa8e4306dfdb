import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// This device's state beside a vault (SPEC.md §7.6): what it keeps survives a reopen, what it
/// reads that is not its own is ignored, never trusted.
final class DeviceStateTests: XCTestCase {
    func testTheUsageLogKeepsTheMostRecentFillFirstAndSurvivesAReopen() throws {
        let vault = try Fixture.vault()
        let a = try RecordID.random(), b = try RecordID.random(), c = try RecordID.random()
        let state = vault.deviceState
        state.recordUse(of: a, at: 100)
        state.recordUse(of: b, at: 300)
        state.recordUse(of: c, at: 200)
        state.recordUse(of: a, at: 400)  // a fill again moves it to the front, once
        let log = try Fixture.reopen(vault).deviceState.lastUsed()
        XCTAssertEqual(log.entries.map(\.id), [a, b, c])
        XCTAssertEqual([log.lastUsed(a), log.lastUsed(b), log.lastUsed(c)], [400, 300, 200])
        XCTAssertEqual(log.lastUsed(try RecordID.random()), 0, "never filled")
    }

    func testATornOrForeignUsageFileIsReadAsFarAsItIsWhole() throws {
        let vault = try Fixture.vault()
        let id = try RecordID.random()
        vault.deviceState.recordUse(of: id, at: 7)
        let path = vault.deviceState.directory + "/" + DeviceState.usageName
        var bytes = try Fixture.bytes(path)
        bytes += [1, 2, 3]  // a write cut short after the last whole entry
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(vault.deviceState.lastUsed().entries.map(\.id), [id], "the torn entry is ignored")
        try Data(repeating: 0xff, count: (DeviceState.usageCapacity + 2) * DeviceState.usageEntryLength).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(vault.deviceState.lastUsed().entries.count, 0, "a file longer than any log of ours is not read")
    }

    func testTheProviderSettingFollowsTheIndexKey() throws {
        let vault = try Fixture.vault()
        let state = vault.deviceState
        XCTAssertEqual(state.providerSetting(), .enabled, "a new vault enables the identity store on its device")
        try state.disable()
        XCTAssertEqual(state.providerSetting(), .disabled)
        XCTAssertNil(state.indexKey(), "nothing readable while locked once disabled")
        try state.enable(indexKey: try SecureBytes(copying: [UInt8](repeating: 1, count: 32)))
        XCTAssertEqual(state.providerSetting(), .enabled)
    }
}
