import CofferFormat
import FoundationEssentials

/// Where quick unlock stands for one container on this device (SPEC.md §8.6).
public enum QuickUnlockState: Equatable, Sendable {
    case off
    /// A PIN (or the system's authentication) opens the vault; for a PIN, `attemptsLeft` more
    /// wrong ones destroy the wrapped key.
    case available(method: QuickUnlockFile.Method, attemptsLeft: Int, expires: Date?)
    /// Set up here but unusable now: the master password is needed (and quick unlock can be
    /// turned on again after it).
    case ended(QuickUnlockEnd)
}

/// Why a quick unlock set up on this device no longer opens the vault.
public enum QuickUnlockEnd: Equatable, Sendable, CustomStringConvertible {
    /// The device secret is gone from the kernel keyring: the machine restarted, or the device
    /// state was copied here from elsewhere.
    case deviceSecretGone
    /// Past the lifetime it was given.
    case expired
    /// The vault header changed (`coffer passwd`, here or on a synced device).
    case headerChanged
    /// Three wrong PINs.
    case tooManyAttempts
    /// The device file is damaged.
    case unreadable
    /// The TPM's lifetime (14 days unless set) is over: the next unlock with the master password
    /// renews it, without the PIN.
    case renewable
    /// The TPM here did not seal it: the state came from another machine, or the TPM was cleared.
    case otherTPM
    /// The TPM refuses every PIN until its lockout ends (too many wrong ones, for any program).
    case tpmLockedOut
    /// No TPM could be reached (why).
    case tpmUnavailable(String)

    public var description: String {
        switch self {
        case .deviceSecretGone: "quick unlock ended with the last restart (or its state came from another machine)"
        case .expired: "quick unlock expired"
        case .headerChanged: "quick unlock ended: the master password changed"
        case .tooManyAttempts: "quick unlock ended after three wrong PINs"
        case .unreadable: "quick unlock's device file is damaged"
        case .renewable: "quick unlock by the TPM is due for the master password (it renews it)"
        case .otherTPM: "quick unlock was sealed by another machine's TPM (or this TPM was cleared)"
        case .tpmLockedOut: "the TPM is locked out after too many wrong PINs and refuses them for a while"
        case .tpmUnavailable(let why): "quick unlock needs the TPM, which is unavailable (\(why))"
        }
    }
}

/// A PIN for this device (SPEC.md §8.6): the vault key wrapped under BLAKE2b(key: a device secret
/// in the kernel keyring, Argon2id(PIN)), in this container's device state — never synced, never
/// backed up, never in the container. A disk, a backup or a copy of the state opens nothing
/// without the secret, which a restart erases; three wrong PINs erase the wrapped key.
extension Vault {
    /// Where quick unlock stands here; never asks the keyring to do more than look.
    public func quickUnlockState(secrets: KeyringSessions?) -> QuickUnlockState {
        guard let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength) else { return .off }
        guard let file = try? QuickUnlockFile.decode(bytes) else { return .ended(.unreadable) }
        if let end = end(of: file, secrets: secrets, lookingOnly: true) { return .ended(end) }
        return .available(
            method: file.method, attemptsLeft: Int(file.attemptsLeft), expires: file.expires == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(file.expires)))
    }

    /// Turns quick unlock on with `pin` for the unlocked vault, replacing an earlier one.
    /// - Parameter lifetime: how long it lasts; `nil`: until the machine restarts.
    /// - Throws: `VaultError.locked`, `invalidInput` for a PIN under 4 or over 64 bytes,
    ///   `KeyringSessions.Unavailable` without a kernel keyring.
    public func enableQuickUnlock(pin: SecureBytes, secrets: KeyringSessions, lifetime: TimeInterval? = nil, now: Date = Date()) throws {
        guard (4...64).contains(pin.count) else { throw VaultError.invalidInput("a PIN has 4 to 64 characters") }
        try enableQuickUnlock(.pin, pin: pin, secrets: secrets, lifetime: lifetime, now: now)
    }

    /// Turns quick unlock on with the system's authentication (the caller asked it first and it
    /// said yes), replacing an earlier one.
    public func enableSystemQuickUnlock(secrets: KeyringSessions, lifetime: TimeInterval? = nil, now: Date = Date()) throws {
        try enableQuickUnlock(.system, pin: nil, secrets: secrets, lifetime: lifetime, now: now)
    }

    private func enableQuickUnlock(
        _ method: QuickUnlockFile.Method, pin: SecureBytes?, secrets: KeyringSessions, lifetime: TimeInterval?, now: Date
    ) throws {
        let secret = try SecureBytes.random(count: 32)
        var file = try newQuickUnlockFile(method, lifetime: lifetime, now: now)
        try seal(&file, wrapping: Self.wrappingKey(pin: pin, secret: secret, file: file, vaultID: vaultID))
        try secrets.storeDeviceSecret(secret, for: vaultID, containerTag: deviceState.containerTag)
        try writeQuickUnlock(file)
    }

    /// A quick unlock file for the unlocked vault, all but its sealed key.
    func newQuickUnlockFile(_ method: QuickUnlockFile.Method, lifetime: TimeInterval?, now: Date) throws -> QuickUnlockFile {
        _ = try keys()  // locked: nothing to wrap
        let created = UInt64(now.timeIntervalSince1970)
        return QuickUnlockFile(
            method: method, attemptsLeft: QuickUnlockFile.attempts, created: created, expires: lifetime.map { created + UInt64(max(1, $0)) } ?? 0,
            headerDigest: try headerDigest(), salt: try SecureRandom.bytes(Argon2id.saltLength),
            parameters: method == .pin ? QuickUnlockFile.pinParameters : KDFParameters(opsLimit: 0, memLimit: 0),
            nonce: try XChaCha20Poly1305.randomNonce(), sealedKey: [])
    }

    /// Wraps the vault key into `file` (every other member set: they are its associated data).
    func seal(_ file: inout QuickUnlockFile, wrapping: SecureBytes) throws {
        let associatedData = file.associatedData(vaultID: vaultID)
        file.sealedKey = try keys().vaultKey.withUnsafeBytes { (key) throws in
            try XChaCha20Poly1305.seal(key, key: wrapping, nonce: file.nonce, associatedData: associatedData)
        }
    }

    /// Turns quick unlock off here: the wrapped key and the device secret go.
    public func disableQuickUnlock(secrets: KeyringSessions?) throws {
        try mappingErrors(file: deviceState.directory) { try destroyQuickUnlock(secrets: secrets) }
    }

    /// What a PIN try found.
    public enum PINOutcome: Equatable, Sendable {
        case unlocked
        /// Wrong: the attempt is counted (`attemptsLeft` more); settle it once the master
        /// password was tried too (`settleQuickUnlock(passwordWasRight:)`).
        case wrong(attemptsLeft: Int)
        /// Nothing to try: quick unlock is off or ended (and why).
        case unavailable(QuickUnlockEnd?)
    }

    /// Tries `pin`. The attempt is counted on disk before the key is derived, so killing the
    /// process mid-try gains nothing; a right PIN gives the attempts back.
    /// - Parameter tpm: where a TPM method's object is unsealed.
    public func unlock(pin: SecureBytes, secrets: KeyringSessions, tpm: TPM = TPM(tcti: nil)) throws -> PINOutcome {
        guard let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength) else { return .unavailable(nil) }
        guard let file = try? QuickUnlockFile.decode(bytes) else { return .unavailable(.unreadable) }
        guard file.method.takesPIN else { return .unavailable(nil) }
        if let end = end(of: file, secrets: secrets, lookingOnly: false) { return .unavailable(end) }
        if file.method == .tpmWithPIN { return try unlockWithTPM(file, pin: pin, tpm: tpm) }
        return try unlockWithDeviceSecret(file, pin: pin, secrets: secrets)
    }

    private func unlockWithDeviceSecret(_ file: QuickUnlockFile, pin: SecureBytes, secrets: KeyringSessions) throws -> PINOutcome {
        var file = file
        guard let secret = try secrets.deviceSecret(for: vaultID, containerTag: deviceState.containerTag) else { return .unavailable(.deviceSecretGone) }
        let full = file.attemptsLeft
        file.attemptsLeft -= 1
        try writeQuickUnlock(file)
        guard let vaultKey = try unwrap(file, pin: pin, secret: secret) else { return .wrong(attemptsLeft: Int(file.attemptsLeft)) }
        file.attemptsLeft = max(full, QuickUnlockFile.attempts)
        try writeQuickUnlock(file)
        try unlock(vaultKey: vaultKey)
        return .unlocked
    }

    /// Unlocks with the key quick unlock holds for the system's authentication: the caller's
    /// `SystemAuthenticator` said yes just now. - Returns: whether it opened the vault.
    public func unlockAfterSystemAuthentication(secrets: KeyringSessions) throws -> Bool {
        guard let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength),
              let file = try? QuickUnlockFile.decode(bytes), file.method == .system, end(of: file, secrets: secrets, lookingOnly: false) == nil,
              let secret = try secrets.deviceSecret(for: vaultID, containerTag: deviceState.containerTag)
        else { return false }
        guard let vaultKey = try unwrap(file, pin: nil, secret: secret) else { return false }
        try unlock(vaultKey: vaultKey)
        return true
    }

    /// After a wrong PIN, once the same text was tried as the master password: a right password
    /// gives the attempt back (the person typed their password, not a wrong PIN); a wrong one
    /// leaves it counted, and the last one destroys the wrapped key.
    public func settleQuickUnlock(passwordWasRight: Bool, secrets: KeyringSessions) {
        guard let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength),
              var file = try? QuickUnlockFile.decode(bytes)
        else { return }
        if passwordWasRight, file.attemptsLeft > 0 {
            file.attemptsLeft = QuickUnlockFile.attempts
            try? writeQuickUnlock(file)
        } else if file.attemptsLeft == 0 {
            try? destroyQuickUnlock(secrets: secrets)
        }
    }

    // MARK: Internals

    /// Why `file` cannot open the vault now, if it cannot. An exhausted file is destroyed
    /// unless only looked at.
    func end(of file: QuickUnlockFile, secrets: KeyringSessions?, lookingOnly: Bool) -> QuickUnlockEnd? {
        if file.attemptsLeft == 0 {
            if !lookingOnly, let secrets { try? destroyQuickUnlock(secrets: secrets) }
            return .tooManyAttempts
        }
        guard let digest = try? headerDigest(), digest == file.headerDigest else { return .headerChanged }
        if file.expires != 0, UInt64(Date().timeIntervalSince1970) >= file.expires { return file.method.usesTPM ? .renewable : .expired }
        if file.method.usesTPM { return nil }  // the TPM, not the keyring, holds its secret
        guard let secrets, (try? secrets.deviceSecret(for: vaultID, containerTag: deviceState.containerTag)) ?? nil != nil else {
            return .deviceSecretGone
        }
        return nil
    }

    /// The vault key `file` wraps, or `nil` when the PIN (or the file) is wrong.
    func unwrap(_ file: QuickUnlockFile, pin: SecureBytes?, secret: SecureBytes) throws -> SecureBytes? {
        let wrapping = try Self.wrappingKey(pin: pin, secret: secret, file: file, vaultID: vaultID)
        return try? XChaCha20Poly1305.open(file.sealedKey[...], key: wrapping, nonce: file.nonce[...], associatedData: file.associatedData(vaultID: vaultID))
    }

    /// BLAKE2b-256 keyed with the device secret, of Argon2id(PIN) ‖ vault id (a PIN), or of the
    /// vault id alone (the system's authentication).
    static func wrappingKey(pin: SecureBytes?, secret: SecureBytes, file: QuickUnlockFile, vaultID: VaultID) throws -> SecureBytes {
        let stretched = try pin.map { try Argon2id.deriveKey(length: 32, password: $0, salt: file.salt, parameters: file.parameters) }
        var message = (stretched?.withUnsafeBytes { Array($0) } ?? []) + vaultID.bytes
        defer { message.withUnsafeMutableBytes { Sodium.wipe($0) } }
        var digest = try BLAKE2b.hash(message, key: secret, length: 32)
        defer { digest.withUnsafeMutableBytes { Sodium.wipe($0) } }
        return try SecureBytes(copying: digest)
    }

    /// BLAKE2b-256 of the header file as it is on disk.
    func headerDigest() throws -> [UInt8] {
        let opened = try openContainer()
        return try BLAKE2b.hash(fileSystem.readFile(GroupContainer.headerName, in: opened.root, limit: VaultHeader.length), length: 32)
    }

    func writeQuickUnlock(_ file: QuickUnlockFile) throws {
        try mappingErrors(file: deviceState.directory) { try deviceState.write(file.encoded, to: deviceState.quickUnlockName) }
    }

    func destroyQuickUnlock(secrets: KeyringSessions?) throws(StorageError) {
        try? secrets?.revokeDeviceSecret(for: vaultID, containerTag: deviceState.containerTag)
        do { try deviceState.remove(deviceState.quickUnlockName) } catch where error.isNotFound {}
    }
}
