import CofferProvider
import CofferHostKit

/// The fill agent (SPEC.md §8.5): a host of the provider that stays resident while an unlock
/// session lives, so that `coffer fill` — a process started for one answer — asks a warm
/// process instead of paging in the provider, the index and the public suffix list each time
/// (rbw's agent, 1Password's `op` daemon). It holds no key of its own: every request is a
/// `HostSession.fill` in the client's place, unlocked from the keyring session as `coffer fill`
/// would be (a use: the idle timeout is re-armed), and the vault is locked again before the
/// answer goes out. So `coffer lock` locks it at once, and "locked means locked" holds through
/// it: it answers only what a silent fill hands out, and declines everything else (locked, no
/// match, a choice a person must make), which the client then runs itself.
public final class FillAgent {
    let sessions: KeyringSessions
    let log: (String) -> Void
    /// The identity buckets of the vaults it serves, kept between requests (keyed by vault and
    /// shard, so a change by any writer is a miss, never a stale answer).
    let buckets = IdentityBucketCache()
    /// One warm `HostSession` per container and client environment (the web quirks are read once).
    private var hosts: [String: HostSession] = [:]
    /// The vaults whose sessions it lives for: those it was started for and those it served.
    public private(set) var watched: Set<VaultID> = []
    /// Which vault headers it opens (tests lower it through the API; hosts keep the default).
    public var kdfPolicy: KDFPolicy = .standard
    static let maximumHosts = 16

    public init(sessions: KeyringSessions = KeyringSessions(), log: @escaping (String) -> Void) {
        self.sessions = sessions
        self.log = log
    }

    /// Lives for `vault`'s session too, and for a team's `owner`'s (`HostSession.openTeamOwner`),
    /// whose session opens the team when the team's own has ended.
    public func watch(_ vault: Vault, owner: Vault?) {
        watched.insert(vault.vaultID)
        if let owner { watched.insert(owner.vaultID) }
    }

    /// Set when a client of another version asked: an upgrade replaced Coffer, so this agent
    /// ends and the client's next fill starts one of its own version.
    public private(set) var isOutdated = false

    /// Whether any vault it serves has a live session (looked at, not used): once none has, it
    /// could only decline, so it ends.
    public var isStillNeeded: Bool {
        !isOutdated && watched.contains { vaultID in
            if case .unlocked? = try? sessions.status(for: vaultID) { return true }
            return false
        }
    }

    /// One framed answer for a request's body; never throws.
    public func respond(to body: [UInt8]) -> [UInt8] {
        let request: FillAgentRequest
        do {
            request = try FillAgentRequest(body)
        } catch {
            log("a malformed request: \(error)")
            return FillAgentReply.declined(reason: "malformed request").encoded
        }
        switch request {
        case .check:
            return FillAgentReply.ok.encoded
        case .fill(let fill):
            let reply = answer(fill)
            if case .declined(let reason) = reply { log("declined a fill: \(reason)") } else { log("answered a fill") }
            return reply.encoded
        }
    }

    /// The silent fill `coffer fill` would run with the client's container and environment.
    func answer(_ fill: FillAgentFill) -> FillAgentReply {
        guard fill.version == cofferVersion else {
            isOutdated = true
            return .declined(reason: "the client is Coffer \(fill.version), this agent \(cofferVersion)")
        }
        guard fill.container.hasPrefix("/") else { return .declined(reason: "the container is no absolute path") }
        let host = hostSession(fill)
        let vault: Vault
        do { vault = try host.openVault() } catch { return .declined(reason: "\(error)") }
        defer { vault.lock() }
        guard vault.isUnlocked else {
            buckets.removeAll()  // what it kept of the index goes when a session has ended
            return .declined(reason: "the vault is locked")
        }
        watched.insert(vault.vaultID)
        let result = host.fill(from: vault, serviceIdentifiers: [CredentialServiceIdentifier(parsing: fill.service)], user: fill.user,
                               allowInteraction: false, kind: fill.kind, mayAsk: false)
        return FillAgentReply(result) ?? .declined(reason: Self.reason(result))
    }

    private func hostSession(_ fill: FillAgentFill) -> HostSession {
        let key = ([fill.container] + fill.environment.flatMap { [$0.0, $0.1] }).joined(separator: "\u{0}")
        if let host = hosts[key] { return host }
        if hosts.count >= Self.maximumHosts { hosts.removeAll() }
        let environment = Environment(Dictionary(fill.environment, uniquingKeysWith: { first, _ in first }))
        var configuration = VaultConfiguration.standard(environment: environment)
        configuration.identityBucketCache = buckets
        configuration.kdfPolicy = kdfPolicy
        let host = HostSession(container: GroupContainer(path: fill.container), configuration: configuration, sessions: sessions, interaction: nil)
        host.environment = environment
        host.startsSessions = false
        hosts[key] = host
        return host
    }

    private static func reason(_ result: AutoFillHost.Result) -> String {
        switch result {
        case .noMatch: "no match"
        case .choiceRequired: "a person must choose"
        case .cancelled(let error): "\(error.code)"
        case .filled, .filledCode: "filled"
        }
    }
}
