// A walk through the AutoFill architecture: an app writes credentials into the shared group
// container, the identity store suggests them, and the provider hands a password out silently
// only while the vault is unlocked. Every step is printed. `swift run autofill-tour`.
import Coffer
import Foundation

/// Plays the user: types the master password when the provider asks, picks the first login.
final class TourUser: UserInteraction {
    let password: String
    init(password: String) { self.password = password }

    func requestMasterPassword(attempt: Int, reason: String) throws -> SecureBytes? {
        print("   [user] is asked for the master password \(reason) and types it")
        return try SecureBytes(copying: Array(password.utf8))
    }

    func chooseIdentity(from identities: [RankedIdentity]) -> PasswordCredentialIdentity? {
        let first = identities.first?.identity
        print("   [user] picks \(first.map { "\($0.user)@\($0.serviceIdentifier)" } ?? "nothing")")
        return first
    }
}

func describe(_ result: AutoFillHost.Result) -> String {
    switch result {
    case .filled(let credential, let identity):
        "filled \(credential.user) (password of \(credential.password.count) characters) from record \(identity?.recordIdentifier.prefix(8) ?? "?")…"
    case .filledCode(_, let identity): "filled a one-time code for \(identity?.label ?? "?")"
    case .cancelled(let error): "cancelled: \(error)"
    case .noMatch: "no matching identity"
    case .choiceRequired(let suggestions): "not filled: \(suggestions.count) suggestion(s) for a person to choose from"
    }
}

let base = NSTemporaryDirectory() + "coffer-tour-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: base) }
let configuration = VaultConfiguration(stateDirectory: base + "/state")
let master = "tour master password"

do {
    print("1. The main app creates a vault in the group container and saves two logins.")
    let app = try Vault.create(
        in: GroupContainer(path: base + "/group.coffer.tour"), masterPassword: SecureBytes(copying: Array(master.utf8)),
        kdf: .interactive, configuration: configuration)
    try app.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(identifier: "github.com", type: .domain)],
                            user: "alice", password: "correct-horse-42"))
    try app.add(RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(identifier: "https://mail.example.com/", type: .URL)],
                            user: "bob", password: "battery-staple-7"))
    print("   identity store: \(app.identityStore.state)")

    print("2. The extension starts in its own process: the vault is locked.")
    let extensionVault = try Vault.open(app.container, configuration: configuration)
    let provider = CredentialProvider(vault: extensionVault, interaction: TourUser(password: master), sessions: nil)
    let host = AutoFillHost(provider: provider)
    let page = [CredentialServiceIdentifier(identifier: "https://github.com/login", type: .URL)]

    print("3. The system shows QuickType suggestions for \(page[0]) from the store, while locked:")
    for ranked in try extensionVault.identityStore.credentialIdentities(for: page) {
        print("   suggestion: \(ranked.identity.user) @ \(ranked.identity.serviceIdentifier) (\(ranked.match?.level.description ?? "-"))")
    }

    print("4. The user taps it; no one can answer a prompt (a script, cron):")
    print("   → \(describe(host.fill(serviceIdentifiers: page, allowInteraction: false)))")

    print("5. Same tap with the user present: userInteractionRequired leads to the interactive path.")
    print("   → \(describe(host.fill(serviceIdentifiers: page, allowInteraction: true)))")

    print("6. Unlocked now, the next fill is silent:")
    print("   → \(describe(host.fill(serviceIdentifiers: [CredentialServiceIdentifier(identifier: "https://mail.example.com/", type: .URL)], allowInteraction: false)))")

    print("7. The vault locks; the silent path refuses again.")
    extensionVault.lock()
    print("   → \(describe(host.fill(serviceIdentifiers: page, allowInteraction: false)))")

    print("8. The user turns AutoFill off and on: enabling requires the master password.")
    try extensionVault.identityStore.disable()
    provider.extensionContext.reset()
    provider.prepareInterfaceForExtensionConfiguration()
    print("   → \(provider.extensionContext.outcome.map { "\($0)" } ?? "-"), store: \(extensionVault.identityStore.state)")
} catch {
    print("autofill-tour failed: \(error)")
    exit(1)
}
