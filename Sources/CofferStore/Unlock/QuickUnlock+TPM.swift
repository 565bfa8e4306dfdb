import CofferCrypto
import CofferFormat
import CofferSystem
import FoundationEssentials

/// Where the TPM is reached (SPEC.md §8.6.1): the TCTI that `COFFER_TPM_TCTI` names, else the
/// kernel's resource manager `/dev/tpmrm0`.
public struct TPM: Equatable, Sendable {
    public var tcti: String?

    public init(tcti: String?) { self.tcti = tcti }
    public init(environment: Environment) { self.init(tcti: environment["COFFER_TPM_TCTI"]) }

    /// How long a TPM quick unlock lasts before the master password is asked once again (as
    /// 1Password asks every 14 days): a PIN that never ends would let the password be forgotten.
    public static let lifetime: TimeInterval = 14 * 24 * 3600

    func open() throws(TPMCommands.Failure) -> TPMCommands {
        do { return TPMCommands(channel: try TPMChannel(tcti: tcti)) } catch { throw .channel(error) }
    }
}

/// Why the TPM could not seal quick unlock's secret (said by `quick-unlock enable --tpm`).
public struct TPMQuickUnlockError: Error, Equatable, CustomStringConvertible {
    public let description: String
}

/// Quick unlock through this machine's TPM 2.0 (SPEC.md §8.6.1): a random secret sealed by the
/// TPM — to its owner hierarchy's storage key, so only this TPM loads it — opens the wrapped vault
/// key; with a PIN, the PIN is the sealed object's authorization, so the TPM's dictionary-attack
/// lockout, not Coffer, limits guesses. It survives restarts and lasts 14 days unless told.
extension Vault {
    /// Turns quick unlock on with the TPM (and `pin`, when given) for the unlocked vault,
    /// replacing an earlier one (and revoking its device secret).
    /// - Throws: `VaultError.locked`, `invalidInput` for a PIN under 4 or over 64 bytes,
    ///   `TPMQuickUnlockError` when the TPM cannot be reached or refuses.
    public func enableTPMQuickUnlock(
        pin: SecureBytes?, tpm: TPM, secrets: KeyringSessions?, lifetime: TimeInterval = TPM.lifetime, now: Date = Date()
    ) throws {
        if let pin, !(4...64).contains(pin.count) { throw VaultError.invalidInput("a PIN has 4 to 64 characters") }
        var file = try newQuickUnlockFile(pin == nil ? .tpm : .tpmWithPIN, lifetime: lifetime, now: now)
        file.pinLength = UInt8(pin?.count ?? 0)
        let secret = try SecureBytes.random(count: 32)
        var authValue = try pin.map { try tpmAuthValue(pin: $0, salt: file.salt) } ?? []
        defer { authValue.withUnsafeMutableBytes { Sodium.wipe($0) } }
        do {
            let commands = try tpm.open()
            let primary = try commands.createPrimary()
            defer { commands.flush(primary) }
            file.sealedObject = try commands.createSealedObject(parent: primary, data: secret, authValue: authValue)
        } catch {
            throw TPMQuickUnlockError(description: Self.describe(error))
        }
        try seal(&file, wrapping: Self.wrappingKey(pin: nil, secret: secret, file: file, vaultID: vaultID))
        try? secrets?.revokeDeviceSecret(for: vaultID, containerTag: deviceState.containerTag)
        try writeQuickUnlock(file)
    }

    /// Unlocks with the TPM alone (method 3), once the host saw the person ask for it (an empty
    /// answer to its prompt, SPEC.md §8.6.1): `.unlocked`, or why not.
    public func unlockWithTPM(_ tpm: TPM) throws -> PINOutcome {
        guard let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength) else { return .unavailable(nil) }
        guard let file = try? QuickUnlockFile.decode(bytes) else { return .unavailable(.unreadable) }
        guard file.method == .tpm else { return .unavailable(nil) }
        if let end = end(of: file, secrets: nil, lookingOnly: false) { return .unavailable(end) }
        return try unlockWithTPM(file, pin: nil, tpm: tpm)
    }

    /// Unseals `file`'s secret with `pin` (counted first, as a PIN's try is) and unlocks with the
    /// key it unwraps. A lockout, another TPM or no TPM gives the attempt back: the PIN was not judged.
    func unlockWithTPM(_ file: QuickUnlockFile, pin: SecureBytes?, tpm: TPM) throws -> PINOutcome {
        var file = file
        // Not the PIN's length: the master password, most likely; the TPM is not asked, so it
        // counts no strike toward its lockout (which every program using it would suffer).
        if let pin, pin.count != Int(file.pinLength) { return .wrong(attemptsLeft: Int(file.attemptsLeft)) }
        let full = file.attemptsLeft
        if pin != nil {
            file.attemptsLeft -= 1
            try writeQuickUnlock(file)
        }
        func notJudged(_ end: QuickUnlockEnd) throws -> PINOutcome {
            file.attemptsLeft = full
            try writeQuickUnlock(file)
            return .unavailable(end)
        }
        var authValue = try pin.map { try tpmAuthValue(pin: $0, salt: file.salt) } ?? []
        defer { authValue.withUnsafeMutableBytes { Sodium.wipe($0) } }
        let secret: SecureBytes
        do throws(TPMCommands.Failure) {
            let commands = try tpm.open()
            let primary = try commands.createPrimary()
            defer { commands.flush(primary) }
            let object = try commands.load(file.sealedObject, parent: primary)
            defer { commands.flush(object) }
            secret = try commands.unseal(object, authValue: authValue)
        } catch {
            switch error {
            case .authorizationFailed where pin != nil: return .wrong(attemptsLeft: Int(file.attemptsLeft))
            case .lockedOut: return try notJudged(.tpmLockedOut)
            case .foreignObject: return try notJudged(.otherTPM)
            default: return try notJudged(.tpmUnavailable(Self.describe(error)))
            }
        }
        guard let vaultKey = try unwrap(file, pin: nil, secret: secret) else { return try notJudged(.unreadable) }
        if pin != nil {
            file.attemptsLeft = QuickUnlockFile.attempts
            try writeQuickUnlock(file)
        }
        try unlock(vaultKey: vaultKey)
        return .unlocked
    }

    /// After the master password opened the vault: a TPM quick unlock whose lifetime is over
    /// starts another as long (SPEC.md §8.6.1) — the PIN stays the same, the TPM untouched.
    public func renewQuickUnlock(now: Date = Date()) {
        guard isUnlocked, let bytes = deviceState.read(deviceState.quickUnlockName, limit: QuickUnlockFile.maximumLength),
              var file = try? QuickUnlockFile.decode(bytes), end(of: file, secrets: nil, lookingOnly: true) == .renewable
        else { return }
        let lifetime = file.expires - file.created, seconds = UInt64(now.timeIntervalSince1970)
        file.created = seconds
        file.expires = seconds + max(1, lifetime)
        try? writeQuickUnlock(file)
    }

    /// The sealed object's authValue for `pin`: BLAKE2b-256(message = PIN ‖ vault id, key = salt).
    /// No Argon2id: without this TPM the object opens for no authValue, and with it the TPM counts.
    private func tpmAuthValue(pin: SecureBytes, salt: [UInt8]) throws -> [UInt8] {
        var message = pin.withUnsafeBytes { Array($0) } + vaultID.bytes
        defer { message.withUnsafeMutableBytes { Sodium.wipe($0) } }
        return try BLAKE2b.hash(message, key: SecureBytes(copying: salt), length: 32)
    }

    private static func describe(_ failure: TPMCommands.Failure) -> String {
        switch failure {
        case .channel(let failure): "\(failure)"
        case .authorizationFailed: "the TPM refused the authorization"
        case .lockedOut: "the TPM is locked out after too many wrong authorizations"
        case .foreignObject: "the object was sealed by another TPM"
        case .response(let code, let command): "TPM2_\(command) failed with response code 0x\(String(code, radix: 16))"
        }
    }
}
