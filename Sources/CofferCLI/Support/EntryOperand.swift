import Coffer

/// An ENTRY operand: a record id, or the name a person gave an item (found case-insensitively
/// in the one index bucket of the name, SPEC.md §6.3).
enum EntryOperand {
    static func resolve(_ text: String, in vault: Vault) throws -> RecordID {
        if let id = try? RecordID(hex: text) { return id }
        let items: [ItemEntry]
        do { items = try vault.identityStore.items(named: text) } catch { throw CLIError.from(error) }
        switch items.count {
        case 0:
            throw CLIError("no item is named '\(text.prefix(80))'", hint: "'coffer list' shows names and ids", code: .noInput)
        case 1:
            return items[0].recordID
        default:
            let list = items.map { "\($0.recordID.hex.prefix(8))  \($0.kind.rawValue)  \($0.user)" }.joined(separator: "\n  ")
            throw CLIError("\(items.count) items are named '\(text.prefix(80))':\n  \(list)", hint: "name one by its id", code: .usage)
        }
    }
}
