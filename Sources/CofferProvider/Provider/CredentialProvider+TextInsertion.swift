import CofferStore
import CofferFormat

/// One value of an item a person may insert into any text field (iOS 18's text insertion): the
/// user name, the password, a card's or an identity's member, a field, the notes — named as the
/// item's text form names it (SPEC.md §10.2).
public struct InsertableText: Equatable, Sendable {
    /// Stable within the item: `user`, `password`, a member line's key (`number`, `city`…),
    /// `field N` (the N-th field), `notes`.
    public let member: String
    /// What a person reads: the member's key or the field's name.
    public let label: String
    /// A password, a hidden field or a secret member: shown masked by a chooser.
    public let isSecret: Bool
    public let text: String
}

extension Record {
    /// The item's values that are text a person may insert, each with a value, in the text
    /// form's order.
    public var insertableTexts: [InsertableText] {
        var texts: [InsertableText] = []
        func add(_ member: String, _ label: String, _ text: String, secret: Bool) {
            if !text.isEmpty { texts.append(InsertableText(member: member, label: label, isSecret: secret, text: text)) }
        }
        add("user", "user", user, secret: false)
        add("password", "password", password, secret: true)
        let content = ItemContent(self)
        for line in ItemContent.memberLines where line.kind == kind {
            add(line.key, line.key, line.values(content).filter { !$0.isEmpty }.joined(separator: ", "), secret: line.masked)
        }
        for (index, field) in fields.enumerated() { add("field \(index)", field.name, field.value, secret: field.hidden) }
        add("notes", "notes", notes, secret: false)
        return texts
    }
}

extension CredentialProvider {
    /// Apple's `prepareInterfaceForUserChoosingTextToInsert()` (iOS 18): authenticate, let the
    /// person choose one value of the item `recordID`, and complete with it
    /// (`completeRequest(withTextToInsert:)`). Nothing learns where the text goes.
    /// - Parameter choose: the host's chooser (the browser's chooser page names its choice);
    ///   without one, the interaction's `chooseTextToInsert(from:)`. `nil` from either cancels.
    public func prepareInterfaceForUserChoosingTextToInsert(in recordID: RecordID, choose: (([InsertableText]) -> InsertableText?)? = nil) {
        guard authenticate(reason: "to choose text to insert") else { return }
        let texts: [InsertableText]
        do { texts = try vault.record(withID: recordID).insertableTexts } catch {
            extensionContext.cancelRequest(withError: error == .recordNotFound(recordID)
                ? ExtensionError(.credentialIdentityNotFound) : ExtensionError.failed(error))
            return
        }
        guard let chosen = (choose ?? { self.interaction?.chooseTextToInsert(from: $0) })(texts), texts.contains(chosen) else {
            extensionContext.cancelRequest(withError: ExtensionError(.userCanceled))
            return
        }
        extensionContext.completeRequest(withTextToInsert: chosen.text)
    }
}
