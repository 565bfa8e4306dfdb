import CofferFormat
/// Creating and editing items as a person does, through `ItemContent` and `ItemChange`: the
/// rules are checked before anything is written, and an edit made on a copy a person looked at
/// is written only over the revision they saw (SPEC.md §6.6).
extension Vault {
    /// Adds a new item.
    /// - Throws: `.invalidInput` naming the member that breaks a rule.
    @discardableResult
    public func addItem(_ content: ItemContent) throws(VaultError) -> Record {
        do { try content.check() } catch { throw .invalidInput(error.reason) }
        return try add(content.draft)
    }

    /// Replaces the person's members of item `id` with `content`.
    /// - Parameter revision: the revision the person saw when they started; when the item has
    ///   another now (a sync, another host), nothing is written and `.editConflict` says so. Nil
    ///   writes over whatever is there.
    /// - Returns: the stored item.
    @discardableResult
    public func updateItem(withID id: RecordID, to content: ItemContent, ifRevision revision: UInt64? = nil) throws(VaultError) -> Record {
        do { try content.check() } catch { throw .invalidInput(error.reason) }
        return try updateRecord(withID: id) { record throws(VaultError) in
            try Self.check(record, isAt: revision)
            content.apply(to: &record)
        }
    }

    /// Applies `changes` in order to item `id` as it is when the write happens (under the
    /// vault's lock), so changes to other members made meanwhile are kept.
    /// - Parameter revision: as for `updateItem(withID:to:ifRevision:)`.
    @discardableResult
    public func updateItem(withID id: RecordID, applying changes: [ItemChange], ifRevision revision: UInt64? = nil) throws(VaultError) -> Record {
        try updateRecord(withID: id) { record throws(VaultError) in
            try Self.check(record, isAt: revision)
            var content = ItemContent(record)
            do throws(ItemRuleViolation) {
                for change in changes { try content.apply(change) }
                try content.check()
            } catch { throw .invalidInput(error.reason) }
            content.apply(to: &record)
        }
    }

    private static func check(_ record: Record, isAt revision: UInt64?) throws(VaultError) {
        if let revision, record.revision != revision {
            throw .editConflict(record.id, expected: revision, current: record.revision)
        }
    }
}
