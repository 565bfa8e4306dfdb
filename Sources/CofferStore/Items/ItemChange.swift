import CofferFormat
/// One change a person names to an item (`coffer edit GitHub --tag work --remove-otp`; a form
/// that saves one member): applied to the item as it is when the write happens, so two people
/// changing different members both keep theirs.
public enum ItemChange: Equatable, Sendable {
    case name(String)
    case user(String)
    case password(String)
    case matchMode(MatchMode)
    /// Adds a service at the end; one the item has already is left where it is.
    case addService(CredentialServiceIdentifier)
    /// Removes a service; one the item does not have is refused (a typo, not a no-op).
    case removeService(CredentialServiceIdentifier)
    case addTag(String)
    case removeTag(String)
    /// A one-time code as stored (`ItemRules.oneTimeCode`), or nil to remove it.
    case otp(String?)
    case notes(String)
}

extension ItemContent {
    /// Applies `change`.
    /// - Throws: removing a service or tag the item does not have; a member `check()` refuses.
    public mutating func apply(_ change: ItemChange) throws(ItemRuleViolation) {
        switch change {
        case .name(let name): self.name = name
        case .user(let user): self.user = user
        case .password(let password): self.password = password
        case .matchMode(let mode): matchMode = mode
        case .addService(let service):
            try ItemRules.check(service)
            if !services.contains(service) { services.append(service) }
        case .removeService(let service):
            guard services.contains(service) else { throw ItemRuleViolation(.service, "the item has no service \(service)") }
            services.removeAll { $0 == service }
        case .addTag(let tag):
            let tag = tag.trimmingSpaces()
            guard !tag.isEmpty else { throw ItemRuleViolation(.tag, "an empty tag") }
            if !tags.contains(tag) { tags.append(tag) }
        case .removeTag(let tag):
            guard tags.contains(tag) else { throw ItemRuleViolation(.tag, "the item has no tag '\(tag)'") }
            tags.removeAll { $0 == tag }
        case .otp(let otp): self.otp = otp
        case .notes(let notes): self.notes = notes
        }
    }
}
