// Embeds Coffer as an encrypted store: create a vault in a throw-away container, add a
// credential, read it back, lock, and show that a locked vault refuses to release it.
import Coffer
import Foundation

let container = GroupContainer(path: NSTemporaryDirectory() + "coffer-embed-\(getpid())")
defer { try? FileManager.default.removeItem(atPath: container.path) }

do {
    let password = try SecureBytes(copying: Array("correct horse battery staple".utf8))
    print("1. creating a vault in \(container.path) (Argon2id, libsodium's interactive preset)")
    let vault = try Vault.create(in: container, masterPassword: password, kdf: .interactive)

    let record = try vault.add(RecordDraft(
        serviceIdentifiers: [CredentialServiceIdentifier(identifier: "example.com", type: .domain)],
        user: "alice", password: "s3cret-from-the-example"))
    print("2. added credential \(record.id) for \(record.serviceIdentifiers[0]) / \(record.user)")

    let readBack = try vault.record(withID: record.id)
    print("3. read back: user \(readBack.user), password matches: \(readBack.password == record.password)")

    vault.lock()
    do {
        _ = try vault.record(withID: record.id)
        print("4. ERROR: a locked vault released a record")
        exit(1)
    } catch VaultError.locked {
        print("4. locked: reading the record now fails with VaultError.locked")
    }

    let reopened = try Vault.open(container, configuration: vault.configuration)
    try reopened.unlock(masterPassword: password)
    print("5. reopened and unlocked with the master password: \(try reopened.recordIDs().count) credential(s)")
} catch {
    print("embed-vault failed: \(error)")
    exit(1)
}
