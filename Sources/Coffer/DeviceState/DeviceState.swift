import Glibc

/// What this device, and only this device, knows about a vault (SPEC.md §6.6): whether the
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

    public let directory: String
    let fileSystem: FileSystem

    public init(root: String, vaultID: VaultID, fileSystem: FileSystem = .standard) {
        directory = root + "/vaults/" + vaultID.hex
        self.fileSystem = fileSystem
    }

    var indexKeyPath: String { directory + "/index-key" }
    var disabledPath: String { directory + "/provider-disabled" }
    var generationPath: String { directory + "/generation" }
    var usagePath: String { directory + "/usage" }

    // MARK: Provider setting and index key

    public func providerSetting() -> ProviderSetting {
        if (try? fileSystem.status(disabledPath)) != nil { return .disabled }
        if (try? fileSystem.status(indexKeyPath)) != nil { return .enabled }
        return .notConfigured
    }

    /// The device copy of the index key, if the identity store is enabled here.
    func indexKey() -> SecureBytes? {
        guard var bytes = try? fileSystem.readFile(indexKeyPath, limit: 32), bytes.count == 32 else { return nil }
        defer { bytes.withUnsafeMutableBytes { Sodium.wipe($0) } }
        return try? SecureBytes(copying: bytes)
    }

    func enable(indexKey: SecureBytes) throws(StorageError) {
        try prepare()
        try fileSystem.writeAtomically(indexKey.withUnsafeBytes { Array($0) }, to: indexKeyPath, temporaryDirectory: directory)
        try fileSystem.removeFile(disabledPath)
    }

    /// Removes the index key (so nothing is readable while locked) and records the choice.
    func disable() throws(StorageError) {
        try prepare()
        try fileSystem.writeAtomically([], to: disabledPath, temporaryDirectory: directory)
        try fileSystem.removeFile(indexKeyPath)
    }

    // MARK: Generation high-water mark

    public func highestGeneration() -> UInt64 {
        guard let bytes = try? fileSystem.readFile(generationPath, limit: 8), bytes.count == 8 else { return 0 }
        return LittleEndian.read(UInt64.self, from: bytes, at: 0)
    }

    func recordGeneration(_ generation: UInt64) throws(StorageError) {
        guard generation > highestGeneration() else { return }
        try setHighestGeneration(generation)
    }

    func setHighestGeneration(_ generation: UInt64) throws(StorageError) {
        try prepare()
        try fileSystem.writeAtomically(LittleEndian.bytes(generation), to: generationPath, temporaryDirectory: directory)
    }

    // MARK: Usage (most recently used)

    static let usageEntryLength = identifierByteCount + 8
    static let usageCapacity = 2048

    /// Unix seconds of the last fill of each recently used record.
    public func lastUsed() -> [RecordID: UInt64] {
        guard let bytes = try? fileSystem.readFile(usagePath, limit: Self.usageCapacity * Self.usageEntryLength) else { return [:] }
        var result: [RecordID: UInt64] = [:]
        var offset = 0
        while offset + Self.usageEntryLength <= bytes.count {
            if let id = try? RecordID(bytes: bytes[offset..<offset + identifierByteCount]) {
                result[id] = LittleEndian.read(UInt64.self, from: bytes, at: offset + identifierByteCount)
            }
            offset += Self.usageEntryLength
        }
        return result
    }

    /// Notes a fill. Best effort and not fsynced: losing it only changes an ordering.
    func recordUse(of id: RecordID, at time: UInt64) {
        var usage = lastUsed()
        usage[id] = time
        let kept = usage.sorted { $0.value > $1.value }.prefix(Self.usageCapacity)
        var bytes: [UInt8] = []
        for (id, time) in kept { bytes += id.bytes + LittleEndian.bytes(time) }
        do {
            try fileSystem.overwriteInPlace(bytes, at: usagePath)
        } catch {
            try? prepare()
            try? fileSystem.overwriteInPlace(bytes, at: usagePath)
        }
    }

    private func prepare() throws(StorageError) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if try fileSystem.status(prefix) == nil { try fileSystem.makeDirectory(prefix) }
        }
    }
}
