import CofferStore
import FoundationEssentials

/// A team's membership lease (SPEC.md §16.5): an admin changing the member list first puts a
/// lease on the remote (`refs/heads/coffer-lease`, an empty commit), and every device that
/// follows the rule stops pushing for a while, so that the change lands within a bound however
/// busy the team is. Without it a removal raced four members syncing every 0.3 s and lost for
/// over a minute while the removed member stayed a member on the server.
extension Vault {
    /// Runs `body` holding the team's membership lease, released afterwards; `body` gets the
    /// lease to pass in `SyncOptions.heldLease` (`nil` for a team without a remote, which needs
    /// none). A lease another device holds is waited for — until it is released, or for
    /// `options.leaseSeconds` after this device first saw it.
    public func withMembershipLease<Result>(_ options: SyncOptions, _ body: (String?) throws -> Result) throws -> Result {
        let git = Git(container: container.path, environment: options.environment, deviceState: deviceState)
        guard isTeam, git.exists, try git.remoteURL() != nil else { return try body(nil) }
        let lease = try acquireLease(git, options)
        defer { _ = try? git.pushLease(nil, expecting: lease) }
        return try body(lease)
    }

    private func acquireLease(_ git: Git, _ options: SyncOptions) throws -> String {
        let mine = try git.makeLease()
        let deadline = ContinuousClock.now + .seconds(2 * options.leaseSeconds)
        for _ in 0..<10_000 {
            try git.fetch()
            let current = try git.syncRefs().lease
            let now = Int(Date().timeIntervalSince1970)
            let othersFresh = current.map { now - git.leaseFirstSeen($0, now: now) < options.leaseSeconds } ?? false
            if !othersFresh || ContinuousClock.now > deadline {
                if try git.pushLease(mine, expecting: current) { return mine }
            }
            Pause.sleep(randomlyBelow: 300_000, atLeast: 100_000)
            if ContinuousClock.now > deadline + .seconds(options.leaseSeconds) { break }
        }
        throw SyncError.git(command: "push", status: 1, message: "other devices kept the team's membership lease; run it again")
    }
}
