import Coffer

/// The lines of a card's and an identity's members in the item's text (SPEC.md §10.2), as the
/// library's `ItemContent.memberLines` names them; the secrets masked on a terminal as hidden
/// fields are.
extension ItemDocument {
    /// The member lines of `content`'s kind: with `allKeys` every one (an editor's template, so a
    /// person sees what a card has), else those with a value.
    func memberLines(allKeys: Bool, masked: Bool) -> [(key: String, value: String)] {
        ItemContent.memberLines.filter { $0.kind == content.kind }.flatMap { line in
            line.values(content).filter { allKeys || !$0.isEmpty }.map { value in
                (line.key, masked && line.masked && !value.isEmpty ? Self.mask : value)
            }
        }
    }
}
