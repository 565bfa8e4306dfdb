import CofferFormat
import Synchronization

/// What this device, and only this device, knows about a vault (SPEC.md §7.6): whether the
/// identity store is enabled here and its key, the highest index generation seen (whole-vault
/// rollback detection) and when each credential was last filled (ranking).
///
/// Lives under `<state directory>/vaults/<vault id>/`, 0700, outside the container.
public struct DeviceState: Sendable {
    /// The user's identity-store toggle on this device.
    public enum ProviderSetting: Equatable, Sendable {
        /// Never configured here (a new device, a restored vault): the next successful
        /// password unlock enables it.
        case notConfigured
        case enabled
        /// Turned off by the user; only an authenticated configuration turns it on again.
        case disabled
    }

    /// The device's directory for this vault, for messages: `<state>/vaults/<vault id>`.
    public let directory: String
    /// `<state>`: the user's own (`$XDG_STATE_HOME/coffer`); below it nothing is reached
    /// through a link and every directory is private (SPEC.md §3.4, §7.6).
    let root: String
    let vaultName: String
    let fileSystem: FileSystem
    /// The directory once opened: a fill reads five device files, and opening the path each
    /// time cost it a tenth of its instructions. (Device state is never replaced wholesale the
    /// way a restore replaces a container, so holding it open for the process is safe.)
    private let opened = OpenedDirectory()

    /// What this device knows about one container (several containers of one vault — a clone
    /// beside the original — each have their own): a tag of its absolute path names its files.
    package let containerTag: String

    public init(root: String, vaultID: VaultID, container: String, fileSystem: FileSystem = .standard) {
        self.root = root
        vaultName = vaultID.hex
        directory = root + "/vaults/" + vaultID.hex
        self.fileSystem = fileSystem
        containerTag = Self.tag(ofContainer: container)
    }

    /// Hex of BLAKE2b-128 of the container's absolute path (SPEC.md §7.6).
    static func tag(ofContainer path: String) -> String {
        let absolute = FileSystem.absolutePath(path)
        return Hex.encode((try? BLAKE2b.hash(Array(absolute.utf8), length: 16)) ?? Array(absolute.utf8.prefix(16)))
    }

    static let indexKeyName = "index-key"
    static let disabledName = "provider-disabled"
    /// Before marks were kept per container, one mark for every container of the vault: still
    /// read for a container that has none of its own yet.
    static let legacyGenerationName = "generation"
    var generationName: String { "generation-" + containerTag }
    var syncRemoteName: String { "sync-remote-" + containerTag }
    /// What the container's last sync committed, and its copies of the ledger shards (SPEC.md §15.4).
    var syncBaselineName: String { "sync-baseline-" + containerTag }
    var syncLedgerCopyPrefix: String { "sync-ledger-" + containerTag + "-" }
    /// This container's quick unlock (SPEC.md §8.6).
    var quickUnlockName: String { "quick-unlock-" + containerTag }
    static let usageName = "usage"
    static let listingName = "listing"
    var listingPath: String { directory + "/" + Self.listingName }

    /// The device directory, opened beneath the state root without following a link; `nil`
    /// when it does not exist yet and `create` is not set. A link or a file in its place throws.
    private func open(create: Bool) throws(StorageError) -> Directory? {
        if let directory = opened.directory { return directory }
        let state: Directory
        do {
            state = try fileSystem.openDirectory(atPath: root, check: .anyOwner)
        } catch where error.isNotFound {
            guard create else { return nil }
            state = try fileSystem.openDirectory(atPath: root, create: true, createParents: true, check: .anyOwner)
        }
        let vaults = try create ? fileSystem.directory("vaults", in: state, create: true) : fileSystem.directoryIfPresent("vaults", in: state)
        guard let vaults else { return nil }
        let directory = try create ? fileSystem.directory(vaultName, in: vaults, create: true) : fileSystem.directoryIfPresent(vaultName, in: vaults)
        if let directory { opened.directory = directory }
        return directory
    }

    /// Reads a device file; `nil` when it (or the directory) is absent or unusable. Reads never
    /// fail a command: an unreadable state only means less (no suggestions while locked, no
    /// recent-use order), and the writes that follow refuse a planted link loudly.
    package func read(_ name: String, limit: Int) -> [UInt8]? {
        guard let directory = try? open(create: false) else { return nil }
        return try? fileSystem.readFile(name, in: directory, limit: limit)
    }

    private func exists(_ name: String) -> Bool {
        guard let directory = try? open(create: false) else { return false }
        return (try? fileSystem.status(name, in: directory)) != nil
    }

    package func write(_ bytes: [UInt8], to name: String, durable: Bool = true) throws(StorageError) {
        guard let directory = try open(create: true) else { return }
        try fileSystem.writeAtomically(bytes, to: name, in: directory, via: directory, durable: durable)
    }

    /// Runs `body` holding the exclusive `flock` on the device file `name`: one process (one
    /// thread) at a time does what it guards; the others wait their turn.
    package func withLock<Result>(_ name: String, _ body: () throws -> Result) throws -> Result {
        guard let directory = try open(create: true) else { return try body() }
        return try FileLock(name, in: directory, fileSystem: fileSystem).withLock(.exclusive, body)
    }

    package func remove(_ name: String) throws(StorageError) {
        guard let directory = try open(create: false) else { return }
        try fileSystem.removeFile(name, in: directory)
    }

    // MARK: Provider setting and index key

    public func providerSetting() -> ProviderSetting {
        if exists(Self.disabledName) { return .disabled }
        if exists(Self.indexKeyName) { return .enabled }
        return .notConfigured
    }

    /// The device copy of the index key, if the identity store is enabled here.
    func indexKey() -> SecureBytes? {
        guard var bytes = read(Self.indexKeyName, limit: 32), bytes.count == 32 else { return nil }
        defer { bytes.withUnsafeMutableBytes { Sodium.wipe($0) } }
        return try? SecureBytes(copying: bytes)
    }

    package func enable(indexKey: SecureBytes) throws(StorageError) {
        try write(indexKey.withUnsafeBytes { Array($0) }, to: Self.indexKeyName)
        try remove(Self.disabledName)
    }

    /// Removes the index key (so nothing is readable while locked) and every file derived from
    /// the index (listing snapshot, completion table, bucket parts), and records the choice.
    package func disable() throws(StorageError) {
        try write([], to: Self.disabledName)
        try remove(Self.indexKeyName)
        try removeTable(Self.listingName)
        try removeTable(Self.completionTableName)
        if let directory = try open(create: false) {
            for name in try fileSystem.contents(of: directory) where name.hasPrefix(Self.bucketPartsPrefix) { try remove(name) }
        }
    }

    // MARK: Listing snapshot and completion table (`DerivedTable`)

    static let maximumListingLength = 1 << 30
    static let completionTableName = "completion"

    /// The names of this device's files for the vault (a derived table's stale chunks are found so).
    func fileNames() -> [String] {
        guard let directory = try? open(create: false) else { return [] }
        return (try? fileSystem.contents(of: directory)) ?? []
    }

    /// Removes a derived table: its header file and every chunk file.
    func removeTable(_ name: String) throws(StorageError) {
        try remove(name)
        for file in fileNames() where file.hasPrefix(name + "-") { try remove(file) }
    }

    // MARK: Bucket parts

    /// The parts file of index slot `slot` (SPEC.md §7.6), open to be read in pieces; `nil` when
    /// this device has none.
    func bucketParts(slot: Int) -> OpenedFile? {
        guard let directory = try? open(create: false) else { return nil }
        return try? fileSystem.openForReading(Self.bucketPartsName(slot: slot), in: directory)
    }

    /// Replaces the parts file of `slot`. Best effort and not synced, as the listing snapshot.
    func saveBucketParts(_ bytes: [UInt8], slot: Int) {
        try? write(bytes, to: Self.bucketPartsName(slot: slot), durable: false)
    }

    static let bucketPartsPrefix = "parts-"

    /// `parts-` and the slot in three lowercase hex digits.
    static func bucketPartsName(slot: Int) -> String {
        let digits = String(slot, radix: 16)
        return bucketPartsPrefix + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    // MARK: Generation high-water mark

    public func highestGeneration() -> UInt64 {
        guard let bytes = read(generationName, limit: 8) ?? read(Self.legacyGenerationName, limit: 8), bytes.count == 8 else { return 0 }
        return LittleEndian.read(UInt64.self, from: bytes, at: 0)
    }

    package func recordGeneration(_ generation: UInt64) throws(StorageError) {
        guard generation > highestGeneration() else { return }
        try setHighestGeneration(generation)
    }

    func setHighestGeneration(_ generation: UInt64) throws(StorageError) {
        try write(LittleEndian.bytes(generation), to: generationName)
    }

    /// Forgets this container's mark: a clone starts a new container here, whatever an earlier
    /// container at the same path had seen; a failed clone leaves no mark behind.
    func forgetGeneration() throws(StorageError) {
        try write([0, 0, 0, 0, 0, 0, 0, 0], to: generationName)
    }

    /// Removes what this device knows of one container only (a clone that failed): its mark
    /// and its pinned remote. Best effort; the vault's other containers keep theirs.
    func forgetContainer() {
        try? remove(generationName)
        try? remove(syncRemoteName)
        try? remove(syncBaselineName)
        for name in fileNames() where name.hasPrefix(syncLedgerCopyPrefix) { try? remove(name) }
    }

    // MARK: Sync remote

    /// The remote URL this device set for the container (`coffer sync remote`, `clone`): what
    /// `.git/config` must say (SPEC.md §15.1). `nil` when this device never set one; `""` for
    /// a repository without a remote.
    public func syncRemote() -> String? {
        read(syncRemoteName, limit: 64 << 10).map { String(decoding: $0, as: UTF8.self) }
    }

    func pinSyncRemote(_ url: String?) throws(StorageError) {
        try write(Array((url ?? "").utf8), to: syncRemoteName)
    }

    // MARK: Team (SPEC.md §16.5)

    static let teamOwnerName = "team-owner"
    package static let teamPinName = "team-pin"
    static let teamSealedKeyName = "team-sealed-key"

    /// The personal container whose identity opens this team here.
    public func teamOwner() -> String? {
        read(Self.teamOwnerName, limit: 4096).map { String(decoding: $0, as: UTF8.self) }
    }

    package func setTeamOwner(_ path: String) throws(StorageError) {
        try write(Array(path.utf8), to: Self.teamOwnerName)
    }

    /// The id of the team key every record and the index here were last sealed under.
    package func teamSealedKeyID() -> [UInt8]? { read(Self.teamSealedKeyName, limit: 32) }

    package func setTeamSealedKeyID(_ keyID: [UInt8]) throws(StorageError) {
        try write(keyID, to: Self.teamSealedKeyName)
    }

    /// Removes this vault's whole device directory (`team leave`: the team's copy goes).
    package func removeAll() {
        guard let state = try? fileSystem.openDirectory(atPath: root, check: .anyOwner),
              let vaults = try? fileSystem.directoryIfPresent("vaults", in: state)
        else { return }
        fileSystem.removeTree(vaultName, in: vaults)
        opened.directory = nil
    }

    static let teamRemovedName = "team-removed"

    /// This person was removed from the team (SPEC.md §16.6): when (Unix seconds, the remove
    /// entry's time, 0 when unknown) and by whom (empty when unknown). Set by the sync that
    /// found no slot for them; the team is then left out of fills and listings here.
    public func teamRemoval() -> (time: UInt64, by: String)? {
        guard let bytes = read(Self.teamRemovedName, limit: 8 + 64), bytes.count >= 8 else { return nil }
        return (LittleEndian.read(UInt64.self, from: bytes, at: 0), String(decoding: bytes[8...], as: UTF8.self))
    }

    package func setTeamRemoval(time: UInt64, by name: String) throws(StorageError) {
        try write(LittleEndian.bytes(time) + Array(name.utf8.prefix(64)), to: Self.teamRemovedName)
    }

    // MARK: Usage (most recently used)

    static let usageEntryLength = identifierByteCount + 8
    static let usageCapacity = 2048

    /// When each recently used record was last filled.
    public func lastUsed() -> UsageLog { UsageLog(entries: usageEntries()) }

    /// Notes a fill. Best effort and not fsynced: losing it only changes an ordering.
    package func recordUse(of id: RecordID, at time: UInt64) {
        var entries = usageEntries().filter { $0.id != id }
        entries.insert(UsageLog.Entry(id: id, time: time), at: entries.firstIndex { $0.time <= time } ?? entries.endIndex)
        let kept = entries.prefix(Self.usageCapacity)
        var bytes = [UInt8](repeating: 0, count: kept.count * Self.usageEntryLength)
        for (position, entry) in kept.enumerated() {
            let offset = position * Self.usageEntryLength
            bytes.replaceSubrange(offset..<offset + identifierByteCount, with: entry.id.bytes)
            LittleEndian.write(entry.time, into: &bytes, at: offset + identifierByteCount)
        }
        guard let directory = try? open(create: true) else { return }
        try? fileSystem.overwriteInPlace(bytes, at: Self.usageName, in: directory)
    }

    /// The `usage` file as stored (SPEC.md §7.6); a trailing partial entry is ignored.
    private func usageEntries() -> [UsageLog.Entry] {
        // Room for one torn entry past a full log; anything longer is not ours and is ignored.
        let bytes = read(Self.usageName, limit: (Self.usageCapacity + 1) * Self.usageEntryLength - 1) ?? []
        return (0..<bytes.count / Self.usageEntryLength).map { position in
            let offset = position * Self.usageEntryLength
            return UsageLog.Entry(
                id: RecordID(validatedBytes: bytes[offset..<offset + identifierByteCount]),
                time: LittleEndian.read(UInt64.self, from: bytes, at: offset + identifierByteCount))
        }
    }

}

/// When each recently used record was last filled (the device's `usage` file, SPEC.md §7.6),
/// most recent first. Looked up through a copy sorted by identifier: a listing asks once per
/// identity, and a hash table would cost a fill more to build than it saves.
public struct UsageLog: Sendable {
    struct Entry: Sendable {
        let id: RecordID
        let time: UInt64
    }

    /// As stored: most recent first, at most `DeviceState.usageCapacity`.
    let entries: [Entry]
    private let byIdentifier: [Entry]

    init(entries: [Entry]) {
        self.entries = entries
        byIdentifier = entries.sorted { $0.id.words < $1.id.words }
    }

    /// Unix seconds of the last fill of `id`, or 0 if it was not filled recently.
    public func lastUsed(_ id: RecordID) -> UInt64 {
        var low = 0, high = byIdentifier.count
        while low < high {
            let middle = (low + high) / 2
            if byIdentifier[middle].id.words < id.words { low = middle + 1 } else { high = middle }
        }
        return low < byIdentifier.count && byIdentifier[low].id == id ? byIdentifier[low].time : 0
    }
}

/// A directory held open once found (see `DeviceState.opened`).
private final class OpenedDirectory: Sendable {
    private let state = Mutex<Directory?>(nil)
    var directory: Directory? {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
