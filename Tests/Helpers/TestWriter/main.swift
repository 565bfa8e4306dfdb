// A separate process for multi-process tests: `coffer-test-writer COMMAND CONTAINER …` with the
// master password on the first line of stdin. Uses the relaxed KDF policy, so it only opens
// vaults that tests created; it is not installed and not part of the product.
import Coffer
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("coffer-test-writer: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: add CONTAINER COUNT | update CONTAINER ID COUNT") }
guard let line = readLine(strippingNewline: true) else { fail("no password on stdin") }
do {
    var configuration = VaultConfiguration.standard()
    configuration.kdfPolicy = .relaxedForTesting
    let vault = try Vault.open(GroupContainer(path: arguments[2]), configuration: configuration)
    try vault.unlock(masterPassword: SecureBytes(copying: Array(line.utf8)))
    switch arguments[1] {
    case "add":
        for index in 0..<(Int(arguments[3]) ?? 0) {
            try vault.add(RecordDraft(
                serviceIdentifiers: [CredentialServiceIdentifier(identifier: "site\(index).example", type: .domain)],
                user: "writer\(getpid())", password: "pw-\(index)"))
        }
    case "update":
        let id = try RecordID(hex: arguments[3])
        for _ in 0..<(Int(arguments[4]) ?? 0) {
            try vault.updateRecord(withID: id) { record in record.notes += "x" }
        }
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
