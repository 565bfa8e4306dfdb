import CSodium

/// Argon2id cost parameters, stored explicitly in the vault header (SPEC.md §4.1).
public struct KDFParameters: Equatable, Sendable {
    /// `crypto_pwhash_ALG_ARGON2ID13`: the only algorithm a v1 vault uses.
    public static let argon2id13: UInt8 = UInt8(crypto_pwhash_argon2id_ALG_ARGON2ID13)

    public var algorithm: UInt8
    /// Passes over memory (`opslimit`).
    public var opsLimit: UInt32
    /// Memory in bytes (`memlimit`).
    public var memLimit: UInt64

    public init(algorithm: UInt8 = KDFParameters.argon2id13, opsLimit: UInt32, memLimit: UInt64) {
        self.algorithm = algorithm
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's presets (`crypto_pwhash_argon2id_{OPS,MEM}LIMIT_*`).
    public static let interactive = KDFParameters(
        opsLimit: UInt32(crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE), memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE))
    public static let moderate = KDFParameters(
        opsLimit: UInt32(crypto_pwhash_argon2id_OPSLIMIT_MODERATE), memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_MODERATE))
    public static let sensitive = KDFParameters(
        opsLimit: UInt32(crypto_pwhash_argon2id_OPSLIMIT_SENSITIVE), memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_SENSITIVE))

    /// The default for new vaults: libsodium's "moderate" (3 passes, 256 MiB).
    public static let `default` = moderate
}

/// The range of KDF costs a reader accepts from a header, checked *before* deriving so a
/// tampered header cannot make Coffer allocate gigabytes or accept a trivially cheap hash.
///
/// - Warning: `relaxedForTesting` exists so test suites can use tiny costs through the API;
///   production code passes `.standard`.
public struct KDFPolicy: Sendable {
    public var opsLimit: ClosedRange<UInt32>
    public var memLimit: ClosedRange<UInt64>

    public init(opsLimit: ClosedRange<UInt32>, memLimit: ClosedRange<UInt64>) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// SPEC.md §4.2: at least libsodium's interactive preset, at most 10 passes and 1 GiB.
    public static let standard = KDFPolicy(opsLimit: 2...10, memLimit: (64 << 20)...(1 << 30))

    /// Accepts libsodium's minimum cost (1 pass, 8 KiB) so tests run in microseconds.
    public static let relaxedForTesting = KDFPolicy(
        opsLimit: UInt32(crypto_pwhash_argon2id_OPSLIMIT_MIN)...10,
        memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_MIN)...(1 << 30))

    /// Cheapest parameters `relaxedForTesting` accepts.
    public static let testingParameters = KDFParameters(
        opsLimit: UInt32(crypto_pwhash_argon2id_OPSLIMIT_MIN), memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_MIN))

    public func permits(_ parameters: KDFParameters) -> Bool {
        parameters.algorithm == KDFParameters.argon2id13
            && opsLimit.contains(parameters.opsLimit) && memLimit.contains(parameters.memLimit)
    }
}

/// Argon2id password hashing (`crypto_pwhash` with `crypto_pwhash_ALG_ARGON2ID13`).
public enum Argon2id {
    public static let saltLength = Int(crypto_pwhash_argon2id_SALTBYTES)

    /// Derives `length` key bytes from `password` and `salt`.
    /// - Throws: `CryptoError.keyDerivationFailed` when libsodium refuses (out of memory, or
    ///   parameters outside libsodium's own limits).
    public static func deriveKey(
        length: Int, password: SecureBytes, salt: [UInt8], parameters: KDFParameters
    ) throws(CryptoError) -> SecureBytes {
        try Sodium.ready()
        guard salt.count == saltLength else { throw .invalidLength(expected: saltLength, actual: salt.count) }
        guard parameters.algorithm == KDFParameters.argon2id13 else { throw .keyDerivationFailed }
        let key = try SecureBytes(count: length)
        let status = password.withUnsafeBytes { passwordBytes in
            key.withUnsafeMutableBytes { output in
                crypto_pwhash(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
                    passwordBytes.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(passwordBytes.count),
                    salt, UInt64(parameters.opsLimit), Int(parameters.memLimit), Int32(parameters.algorithm))
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        return key
    }
}
