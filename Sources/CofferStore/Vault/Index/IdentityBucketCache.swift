import CofferFormat
import Synchronization

/// Identity bucket payloads a long-lived host (the browser host, the SSH agent, the Secret
/// Service) has opened, kept by slot with the shard id they came from. A shard is never
/// rewritten (SPEC.md §7.2): while the manifest names the same id, the payload is the same, so a
/// request reads the manifest and only the buckets that changed — a suggestion for a site of a
/// 100,000-entry vault no longer reads and decrypts its region's 16 files each time.
///
/// Only payloads that opened (authenticated under the index key, bound to slot and id) are kept;
/// at most `capacity` bytes. A one-shot CLI command has none: a fill reads each bucket once.
public final class IdentityBucketCache: Sendable {
    private struct Entry {
        let vaultID: VaultID
        let shard: ShardID
        let payload: [UInt8]
    }

    private struct State {
        var entries = [Entry?](repeating: nil, count: IndexManifest.identitySlots)
        var bytes = 0
    }

    private let state = Mutex(State())
    /// 64 MiB: the identity buckets of a vault of several hundred thousand logins.
    public let capacity: Int

    public init(capacity: Int = 64 << 20) {
        self.capacity = capacity
    }

    /// The payload of `slot` when it was opened from shard `shard` of vault `vaultID`.
    func payload(slot: Int, shard: ShardID, vaultID: VaultID) -> [UInt8]? {
        state.withLock { state in
            guard let entry = state.entries[slot], entry.shard == shard, entry.vaultID == vaultID else { return nil }
            return entry.payload
        }
    }

    /// Keeps a payload just opened, replacing the slot's older one; nothing when full.
    func keep(_ payload: [UInt8], slot: Int, shard: ShardID, vaultID: VaultID) {
        state.withLock { state in
            let replaced = state.entries[slot]?.payload.count ?? 0
            guard state.bytes - replaced + payload.count <= capacity else { return }
            state.entries[slot] = Entry(vaultID: vaultID, shard: shard, payload: payload)
            state.bytes += payload.count - replaced
        }
    }

    /// How many payload bytes it holds.
    var byteCount: Int { state.withLock { $0.bytes } }

    /// Forgets everything (the host locked the vault).
    public func removeAll() {
        state.withLock { $0 = State() }
        manifests.withLock { $0 = [:] }
    }

    /// The manifest each vault last opened, kept across requests (the fill agent's are separate
    /// `Vault` objects): the same file bytes need no second decryption.
    private let manifests = Mutex<[VaultID: OpenedManifest]>([:])

    func openedManifest(of vaultID: VaultID) -> OpenedManifest {
        manifests.withLock { manifests in
            if let kept = manifests[vaultID] { return kept }
            if manifests.count >= 64 { manifests = [:] }
            let opened = OpenedManifest()
            manifests[vaultID] = opened
            return opened
        }
    }
}

/// The manifest a vault last opened, with the file's exact bytes: a fill reads the index twice
/// (its identities, then its record's ledger entry), and the second read of the same file needs
/// no second decryption. Any other byte means another commit, opened afresh.
package final class OpenedManifest: Sendable {
    private let last = Mutex<(bytes: [UInt8], manifest: IndexManifest)?>(nil)

    func manifest(ifFileIs bytes: [UInt8]) -> IndexManifest? {
        last.withLock { last in last.flatMap { $0.bytes.hasSameBytes(as: bytes) ? $0.manifest : nil } }
    }

    func keep(_ manifest: IndexManifest, file bytes: [UInt8]) {
        last.withLock { $0 = (bytes, manifest) }
    }
}
