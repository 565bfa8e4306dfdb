// A separate process for multi-process tests: `coffer-test-writer COMMAND CONTAINER …` with the
// master password on the first line of stdin. Uses the relaxed KDF policy, so it only opens
// vaults that tests created; it is not installed and not part of the product.
//
//   add CONTAINER COUNT            COUNT single adds
//   import CONTAINER COUNT         one bulk add of COUNT records
//   update CONTAINER ID COUNT      COUNT read-modify-write updates of one record
//   delete CONTAINER ID
//   sync CONTAINER                 one `sync` with the container's remote
// COFFER_TEST_CRASH_AT=N makes the process SIGKILL itself at its Nth mutating file step;
// COFFER_TEST_SYNC_KILL_AT=STEP after a step of the sync (SyncStep's raw values);
// COFFER_TEST_SYNC_WRITE_AT=STEP adds a record (`during-sync.example`) after that step.
import Coffer
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("coffer-test-writer: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: add|import CONTAINER COUNT | update CONTAINER ID COUNT | delete CONTAINER ID | sync CONTAINER") }
guard let line = readLine(strippingNewline: true) else { fail("no password on stdin") }
do {
    var configuration = VaultConfiguration.standard()
    configuration.kdfPolicy = .relaxedForTesting
    let vault = try Vault.open(GroupContainer(path: arguments[2]), configuration: configuration)
    try vault.unlock(masterPassword: SecureBytes(copying: Array(line.utf8)))
    // Arm the crash only now, so that it strikes inside the operation under test.
    let crashAt = ProcessInfo.processInfo.environment["COFFER_TEST_CRASH_AT"].flatMap(Int.init)
    configuration.fileSystem = FileSystem(faults: FaultInjector(failAt: crashAt, crashing: true))
    let target = try Vault.open(vault.container, configuration: configuration)
    try target.unlock(vaultKey: vault.keys().vaultKey)
    func draft(_ index: Int) -> RecordDraft {
        RecordDraft(
            serviceIdentifiers: [CredentialServiceIdentifier(identifier: "site\(index).example", type: .domain)],
            user: "writer\(getpid())", password: "pw-\(index)")
    }
    switch arguments[1] {
    case "add":
        for index in 0..<(Int(arguments[3]) ?? 0) { try target.add(draft(index)) }
    case "import":
        try target.add((0..<(Int(arguments[3]) ?? 0)).map(draft))
    case "update":
        let id = try RecordID(hex: arguments[3])
        for _ in 0..<(Int(arguments[4]) ?? 0) {
            try target.updateRecord(withID: id) { record in record.notes += "x" }
        }
    case "delete":
        try target.deleteRecord(withID: try RecordID(hex: arguments[3]))
    case "sync":
        let killAt = ProcessInfo.processInfo.environment["COFFER_TEST_SYNC_KILL_AT"]
        let writeAt = ProcessInfo.processInfo.environment["COFFER_TEST_SYNC_WRITE_AT"]
        _ = try target.sync(SyncOptions(stepObserver: { step in
            if step.rawValue == killAt { kill(getpid(), SIGKILL) }
            if step.rawValue == writeAt {
                do {
                    try target.add(RecordDraft(
                        serviceIdentifiers: [CredentialServiceIdentifier(identifier: "during-sync.example", type: .domain)], user: "dora", password: "d"))
                } catch {
                    fail("the write during the sync: \(error)")
                }
            }
        }))
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
