import CKeyutils
import CofferFormat
import FoundationEssentials
import Glibc

/// Unlock sessions shared by every process of the user, in the Linux kernel key retention
/// service: the analogue of the keychain item that keeps an iOS extension unlocked for a while.
///
/// `coffer unlock` stores the vault key as a `user` key named `coffer:vault:<vault id>` in the
/// user keyring (`@u`), readable only by this uid, with a kernel-enforced timeout that each use
/// pushes back (an idle timeout). `lock` revokes it: from that instant no process can read it.
/// The key never touches the disk (SPEC.md §8.4).
public struct KeyringSessions: Sendable {
    /// What a session looks like from outside.
    public enum Status: Equatable, Sendable {
        case locked
        /// Unlocked; the session ends after `idleTimeout` without use, `remaining` from now.
        case unlocked(remaining: TimeInterval, idleTimeout: TimeInterval)
    }

    /// Where the kernel keyring is unusable (some containers forbid `add_key`), why.
    public enum Unavailable: Error, Equatable, Sendable, CustomStringConvertible {
        case keyring(errno: Int32)
        public var description: String {
            if case .keyring(let code) = self { return "the kernel keyring is unavailable (\(String(cString: strerror(code))))" }
            return "the kernel keyring is unavailable"
        }
    }

    static let keyType = "user"
    /// Payload: vault key (32) ‖ idle timeout seconds u32 ‖ last use, unix seconds u64.
    static let payloadLength = 32 + 4 + 8

    public init() {}

    static func description(of vaultID: VaultID) -> String { "coffer:vault:" + vaultID.hex }

    // MARK: Operations

    /// Stores `vaultKey` for `idleTimeout` seconds of inactivity, replacing any earlier session.
    public func store(vaultKey: SecureBytes, for vaultID: VaultID, idleTimeout: TimeInterval) throws(Unavailable) {
        let seconds = UInt32(max(1, min(idleTimeout, TimeInterval(UInt32.max))))
        var payload = Self.payload(vaultKey: vaultKey, idle: seconds)
        defer { payload.withUnsafeMutableBytes { Sodium.wipe($0) } }
        try add(description: Self.description(of: vaultID), payload: payload, timeout: seconds)
    }

    /// The vault key of a live session, pushing its timeout back by the idle period (a use,
    /// SPEC.md §8.4) unless `rearming` is false; `nil` when locked, expired or revoked.
    public func load(for vaultID: VaultID, rearming: Bool = true) throws(Unavailable) -> SecureBytes? {
        guard let (serial, payload) = try read(vaultID) else { return nil }
        guard rearming else { return try? SecureBytes(copying: payload[0..<32]) }
        let idle = LittleEndian.read(UInt32.self, from: payload, at: 32)
        var refreshed = Array(payload[0..<36]) + LittleEndian.bytes(UInt64(Date().timeIntervalSince1970))
        defer { refreshed.withUnsafeMutableBytes { Sodium.wipe($0) } }
        _ = keyctl_update(serial, refreshed, refreshed.count)
        _ = keyctl_set_timeout(serial, idle)
        return try? SecureBytes(copying: payload[0..<32])
    }

    /// Ends the session at once for every process (`keyctl_revoke`, then unlink).
    /// - Returns: whether there was a session.
    @discardableResult
    public func revoke(for vaultID: VaultID) throws(Unavailable) -> Bool {
        guard let serial = try search(vaultID) else { return false }
        _ = keyctl_revoke(serial)
        _ = keyctl_unlink(serial, KEY_SPEC_USER_KEYRING)
        return true
    }

    /// Locked or unlocked, and for how long; does not count as a use.
    public func status(for vaultID: VaultID) throws(Unavailable) -> Status {
        guard let (_, payload) = try read(vaultID) else { return .locked }
        let idle = TimeInterval(LittleEndian.read(UInt32.self, from: payload, at: 32))
        let lastUse = TimeInterval(LittleEndian.read(UInt64.self, from: payload, at: 36))
        return .unlocked(remaining: max(0, lastUse + idle - Date().timeIntervalSince1970), idleTimeout: idle)
    }

    // MARK: Internals

    static func payload(vaultKey: SecureBytes, idle: UInt32) -> [UInt8] {
        vaultKey.withUnsafeBytes { Array($0) } + LittleEndian.bytes(idle) + LittleEndian.bytes(UInt64(Date().timeIntervalSince1970))
    }

    private func search(_ vaultID: VaultID) throws(Unavailable) -> Int32? {
        try search(description: Self.description(of: vaultID))
    }

    private func search(description: String) throws(Unavailable) -> Int32? {
        let serial = keyctl_search(KEY_SPEC_USER_KEYRING, Self.keyType, description, 0)
        if serial >= 0 { return Int32(serial) }
        switch errno {
        case ENOKEY, EKEYEXPIRED, EKEYREVOKED, ENOENT: return nil
        default: throw .keyring(errno: errno)
        }
    }

    private func read(_ vaultID: VaultID) throws(Unavailable) -> (Int32, [UInt8])? {
        try read(description: Self.description(of: vaultID), length: Self.payloadLength)
    }

    /// The payload of key `description` when it is `length` bytes; `nil` when absent, ended or
    /// of another length.
    private func read(description: String, length expected: Int) throws(Unavailable) -> (Int32, [UInt8])? {
        guard let serial = try search(description: description) else { return nil }
        var buffer: UnsafeMutableRawPointer?
        let length = keyctl_read_alloc(serial, &buffer)
        guard length >= 0, let buffer else {
            if errno == EKEYEXPIRED || errno == EKEYREVOKED || errno == ENOKEY { return nil }
            throw .keyring(errno: errno)
        }
        defer {
            memset(buffer, 0, Int(length))
            free(buffer)
        }
        guard length == expected else { return nil }
        return (serial, Array(UnsafeRawBufferPointer(start: buffer, count: Int(length))))
    }

    /// Adds (or replaces) key `description` with `payload`, readable by this uid only.
    /// - Parameter timeout: seconds until the kernel ends it; `nil`: until revoked or a reboot.
    private func add(description: String, payload: [UInt8], timeout: UInt32?) throws(Unavailable) {
        let serial = add_key(Self.keyType, description, payload, payload.count, KEY_SPEC_USER_KEYRING)
        guard serial >= 0 else { throw .keyring(errno: errno) }
        // Possessor and user (this uid) only; no group, no other (SPEC.md §8.4).
        let permissions = UInt32(KEY_POS_ALL) | UInt32(KEY_USR_VIEW | KEY_USR_READ | KEY_USR_WRITE | KEY_USR_SEARCH | KEY_USR_SETATTR)
        guard keyctl_setperm(serial, permissions) == 0, timeout.map({ keyctl_set_timeout(serial, $0) == 0 }) ?? true else {
            let code = errno
            _ = keyctl_revoke(serial)
            throw .keyring(errno: code)
        }
    }

    // MARK: Device secrets (quick unlock, SPEC.md §8.6)

    static func deviceSecretDescription(of vaultID: VaultID, containerTag: String) -> String {
        "coffer:quick:" + vaultID.hex + ":" + containerTag
    }

    /// Keeps `secret` (32 bytes) for quick unlock of one container until it is revoked or the
    /// machine restarts: the kernel keyring lives in memory only.
    public func storeDeviceSecret(_ secret: SecureBytes, for vaultID: VaultID, containerTag: String) throws(Unavailable) {
        var payload = secret.withUnsafeBytes { Array($0) }
        defer { payload.withUnsafeMutableBytes { Sodium.wipe($0) } }
        try add(description: Self.deviceSecretDescription(of: vaultID, containerTag: containerTag), payload: payload, timeout: nil)
    }

    /// The device secret, or `nil` after a reboot (or on another machine, or once revoked).
    public func deviceSecret(for vaultID: VaultID, containerTag: String) throws(Unavailable) -> SecureBytes? {
        guard let (_, payload) = try read(description: Self.deviceSecretDescription(of: vaultID, containerTag: containerTag), length: 32) else {
            return nil
        }
        var copy = payload
        defer { copy.withUnsafeMutableBytes { Sodium.wipe($0) } }
        return try? SecureBytes(copying: copy[...])
    }

    /// Forgets the device secret: whatever it wrapped opens no more.
    public func revokeDeviceSecret(for vaultID: VaultID, containerTag: String) throws(Unavailable) {
        guard let serial = try search(description: Self.deviceSecretDescription(of: vaultID, containerTag: containerTag)) else { return }
        _ = keyctl_revoke(serial)
        _ = keyctl_unlink(serial, KEY_SPEC_USER_KEYRING)
    }
}
