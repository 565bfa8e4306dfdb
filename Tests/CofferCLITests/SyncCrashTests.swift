import Coffer
import Foundation
import XCTest

/// A sync killed at any step, and writes running beside a sync, lose nothing (SPEC.md §15.4).
final class SyncCrashTests: SyncTestCase {
    var writer: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/coffer-test-writer" }

    /// Two devices whose next sync has everything to do: adds on both sides, an edit of one
    /// record on both (a conflict), a deletion on each side. A has synced; B has not.
    func divergedDevices() -> (SyncDevice, SyncDevice, passwords: [String: Set<String>]) {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let shared = a.add("shared.example", "sam", password: "s0")
        let goneA = a.add("gone-a.example", "gia", password: "ga")
        let goneB = a.add("gone-b.example", "gib", password: "gb")
        a.sync(); b.sync()
        let addedA = a.add("a.example", "ann", password: "pa")
        let addedB = b.add("b.example", "bob", password: "pb")
        a.setPassword(shared, "s-a")
        b.setPassword(shared, "s-b")
        XCTAssertEqual(a.run(["rm", goneA, "--force"]).code, 0)
        XCTAssertEqual(b.run(["rm", goneB, "--force"]).code, 0)
        a.sync()
        return (a, b, [shared: ["s0", "s-a", "s-b"], addedA: ["pa"], addedB: ["pb"]])
    }

    /// `coffer-test-writer sync` of `device`'s container in its own process, started (the
    /// master password on its stdin), not waited for.
    func startWriter(_ device: SyncDevice, killAt step: String? = nil, crashAt fileStep: Int? = nil, writeAt: String? = nil) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: writer) else { throw XCTSkip("\(writer) is missing; 'swift build' builds it") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: writer)
        process.arguments = ["sync", device.container]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = device.harness.environment["XDG_STATE_HOME"]
        environment["HOME"] = root
        if let step { environment["COFFER_TEST_SYNC_KILL_AT"] = step }
        if let writeAt { environment["COFFER_TEST_SYNC_WRITE_AT"] = writeAt }
        if let fileStep { environment["COFFER_TEST_CRASH_AT"] = String(fileStep) }
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((CLIHarness.master + "\n").utf8))
        try input.fileHandleForWriting.close()
        return process
    }

    /// The same, waited for.
    func runWriter(_ device: SyncDevice, killAt step: String? = nil, crashAt fileStep: Int? = nil, writeAt: String? = nil) throws -> Process {
        let process = try startWriter(device, killAt: step, crashAt: fileStep, writeAt: writeAt)
        process.waitUntilExit()
        return process
    }

    /// After the crash: B's vault opens and verifies, the next sync completes, and both
    /// devices end with the same items and every password written.
    func assertRecovers(_ a: SyncDevice, _ b: SyncDevice, _ passwords: [String: Set<String>], _ label: String) {
        let verified = b.run(["verify"])
        XCTAssertEqual(verified.code, 0, "\(label): \(verified.stdout) \(verified.stderr)")
        XCTAssertEqual(b.run(["list"]).code, 0, label)
        b.sync(); a.sync(); b.sync()
        XCTAssertEqual(a.items(), b.items(), label)
        for (id, expected) in passwords {
            XCTAssertTrue(expected.isSubset(of: a.passwords(id)), "\(label): \(id) lost a password: \(a.passwords(id))")
        }
        XCTAssertEqual(a.items().count, 3 + a.items().filter { $0.contains("(conflict ") }.count, label)
    }

    /// A record written after this device's commit and before the merge is in the container but
    /// not in the merged tree: the next sync, staging from its baseline, still commits it.
    func testARecordWrittenBetweenTheCommitAndTheMergeReachesTheRemote() throws {
        let (a, b, _) = divergedDevices()
        let process = try runWriter(b, writeAt: SyncStep.committed.rawValue)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertTrue(b.run(["list"]).stdout.contains("during-sync.example"))
        let report = b.sync()
        XCTAssertNotNil(report["stagedPaths"] as? Int, "staged from the baseline the merge left")
        a.sync()
        XCTAssertTrue(a.run(["list"]).stdout.contains("during-sync.example"), "the write reached A")
        XCTAssertEqual(a.items(), b.items())
    }

    /// Rounds that each start from the same diverged devices: made once, copied aside, and
    /// copied back at the same paths after each round (a round then costs a copy, not two vaults
    /// made and synced again). `round` says whether another follows.
    func sweep(_ round: (SyncDevice, SyncDevice, [String: Set<String>]) throws -> Bool) throws {
        let (a, b, passwords) = divergedDevices()
        let pristine = root + "-pristine"
        XCTAssertEqual(try runTool("/bin/cp", ["-a", root, pristine]).code, 0)
        defer { try? FileManager.default.removeItem(atPath: pristine) }
        while try round(a, b, passwords) {
            try FileManager.default.removeItem(atPath: root)
            XCTAssertEqual(try runTool("/bin/cp", ["-a", pristine, root]).code, 0)
        }
    }

    func testSIGKILLAfterEverySyncStep() throws {
        var steps = SyncStep.allCases.makeIterator()
        try sweep { a, b, passwords in
            guard let step = steps.next() else { return false }
            let process = try runWriter(b, killAt: step.rawValue)
            XCTAssertEqual(process.terminationReason, .uncaughtSignal, "\(step) was reached")
            assertRecovers(a, b, passwords, "killed after \(step)")
            return true
        }
    }

    /// Every mutating file step of a sync, the device's own state included (its sync baseline).
    func testSIGKILLAtEveryFileWriteOfASync() throws {
        var killed = 0
        var fileStep = 0
        try sweep { a, b, passwords in
            fileStep += 1
            let process = try runWriter(b, crashAt: fileStep)
            let wasKilled = process.terminationReason == .uncaughtSignal
            if wasKilled { killed += 1 } else { XCTAssertEqual(process.terminationStatus, 0, "file step \(fileStep)") }
            assertRecovers(a, b, passwords, "killed at file step \(fileStep)")
            return wasKilled
        }
        XCTAssertGreaterThanOrEqual(killed, 5, "the sweep reached the sync's writes")
    }

    /// SIGKILL at random moments, inside git commands too (a stale `index.lock` or a half-moved
    /// ref is what git leaves): the next sync completes and nothing is lost. Twelve rounds, each
    /// about 15 ms later into the sync than the one before.
    func testSIGKILLAtRandomMomentsOfASync() throws {
        var round = 0
        try sweep { a, b, passwords in
            let process = try startWriter(b)
            usleep(UInt32(round) * 15_000 + UInt32.random(in: 0..<15_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            usleep(200_000)  // let an orphaned git command finish
            assertRecovers(a, b, passwords, "killed after \(round * 15) ms or so")
            round += 1
            return round < 12
        }
    }

    /// Two syncs of one container at once (an automatic one and a manual one) take turns.
    func testTwoSyncsOfOneContainerAtOnce() throws {
        let (a, b, passwords) = divergedDevices()
        let syncs = try (0..<2).map { _ in try startWriter(b) }
        for process in syncs {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
        }
        assertRecovers(a, b, passwords, "two syncs at once")
    }

    /// Two devices adding, editing one shared record and syncing in a loop against one bare
    /// repository for ten seconds, each in its own processes: they converge, and every add is
    /// on both (COFFER_SYNC_SOAK_SECONDS changes the ten seconds; scripts/test's team soak is
    /// the longer load, five people through an HTTP server).
    ///
    /// Each round pauses up to 0.4 s, as devices in use do: git has no lock a device could
    /// take on the remote, so a device that pushes without pause every 70 ms (what these
    /// processes manage) starves one whose merge takes longer than that, and its sync gives
    /// up after ten rounds (exit 69, nothing lost).
    func testTwoDevicesSyncingInALoopConverge() throws {
        guard FileManager.default.isExecutableFile(atPath: writer) else { throw XCTSkip("\(writer) is missing") }
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        let shared = a.add("shared.example", "sam", password: "s")
        a.sync(); b.sync()
        let seconds = ProcessInfo.processInfo.environment["COFFER_SYNC_SOAK_SECONDS"] ?? "10"
        let passwordFile = root + "/password"
        try Data((CLIHarness.master + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        let loops = try [a, b].map { device -> Process in
            let loop = Process()
            loop.executableURL = URL(fileURLWithPath: "/bin/sh")
            loop.arguments = ["-c", """
                end=$(( $(date +%s) + $SECONDS_TO_RUN ))
                while [ $(date +%s) -lt $end ]; do
                    "$WRITER" add "$CONTAINER" 1 < "$PWFILE" & pid=$!
                    wait $pid || exit 1
                    echo "writer$pid" >> "$CONTAINER.users"
                    "$WRITER" update "$CONTAINER" "$SHARED" 1 < "$PWFILE" || exit 2
                    "$WRITER" sync "$CONTAINER" < "$PWFILE" || exit 3
                    sleep $(awk -v seed=$$$(date +%N) 'BEGIN { srand(seed); printf "%.2f", rand() * 0.4 }')
                done
                """]
            loop.environment = ProcessInfo.processInfo.environment.merging([
                "SECONDS_TO_RUN": seconds, "WRITER": writer, "CONTAINER": device.container, "PWFILE": passwordFile, "SHARED": shared,
                "HOME": root, "XDG_STATE_HOME": device.harness.environment["XDG_STATE_HOME"]!,
            ]) { _, new in new }
            try loop.run()
            return loop
        }
        for loop in loops {
            loop.waitUntilExit()
            XCTAssertEqual(loop.terminationStatus, 0)
        }
        a.sync(); b.sync(); a.sync()
        XCTAssertEqual(a.items(), b.items())
        let users = Set(a.items().map { $0.split(separator: " ").map(String.init) }.flatMap { $0 })
        var expected = 0
        for device in [a, b] {
            let written = (try? String(contentsOfFile: device.container + ".users", encoding: .utf8)) ?? ""
            for user in written.split(separator: "\n") {
                expected += 1
                XCTAssertTrue(users.contains(String(user)), "\(user), added on \(device.name), was lost")
            }
        }
        XCTAssertGreaterThan(expected, 4, "the loops ran")
        XCTAssertEqual(a.run(["verify"]).code, 0)
    }

    func testWritesDuringASyncAreNotLost() throws {
        let devices = devices()
        let (a, b) = (devices[0], devices[1])
        _ = b.add("fill.example", "fia", password: "f")
        b.sync()
        for index in 0..<20 { _ = a.add("remote\(index).example", "r", password: "r\(index)") }
        a.sync()
        // Five syncs of B in another process while this one adds to B and fills from it.
        guard FileManager.default.isExecutableFile(atPath: writer) else { throw XCTSkip("\(writer) is missing") }
        let syncs = Process()
        syncs.executableURL = URL(fileURLWithPath: "/bin/sh")
        syncs.arguments = ["-c", "for i in 1 2 3 4 5; do printf '%s\\n' \"$PW\" | \"$WRITER\" sync \"$CONTAINER\" || exit 1; done"]
        syncs.environment = ProcessInfo.processInfo.environment.merging([
            "PW": CLIHarness.master, "WRITER": writer, "CONTAINER": b.container, "HOME": root,
            "XDG_STATE_HOME": b.harness.environment["XDG_STATE_HOME"]!,
        ]) { _, new in new }
        try syncs.run()
        var added: [String] = []
        for index in 0..<15 {
            added.append(b.add("local\(index).example", "l", password: "l\(index)"))
            let filled = b.run(["fill", "fill.example"])
            XCTAssertEqual(filled.code, 0, filled.stderr)
            XCTAssertEqual(filled.stdout, "f\n")
        }
        syncs.waitUntilExit()
        XCTAssertEqual(syncs.terminationStatus, 0)
        b.sync(); a.sync()
        XCTAssertEqual(a.items(), b.items())
        XCTAssertEqual(a.items().count, 36)
        for (index, id) in added.enumerated() { XCTAssertEqual(a.record(id)["password"] as? String, "l\(index)") }
    }
}
