import CSodium

/// The one place that initialises libsodium and draws randomness.
///
/// Every entry point of the crypto layer calls `Sodium.ready()` first; `sodium_init` is
/// idempotent and thread-safe, and the cached result makes later calls free.
enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    /// Ensures libsodium is initialised.
    /// - Throws: `CryptoError.initializationFailed` when it cannot be.
    static func ready() throws(CryptoError) {
        guard initialized else { throw .initializationFailed }
    }

    /// `count` bytes from libsodium's CSPRNG (`randombytes_buf`, getrandom(2) on Linux).
    static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(initialized, "libsodium not initialised")
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 { bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) } }
        return bytes
    }

    /// A uniform random integer in `0..<upperBound` (`randombytes_uniform`, no modulo bias).
    static func randomUniform(_ upperBound: UInt32) -> UInt32 {
        precondition(initialized, "libsodium not initialised")
        return randombytes_uniform(upperBound)
    }

    /// Constant-time comparison of two equally long buffers.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    /// Overwrites a buffer with zeros in a way the compiler cannot elide.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }
}

/// Public randomness for callers outside the crypto layer (ids, password generation).
public enum SecureRandom {
    /// `count` cryptographically secure random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        return Sodium.randomBytes(count)
    }

    /// A uniform random integer in `0..<upperBound`, without modulo bias.
    public static func uniform(_ upperBound: UInt32) throws(CryptoError) -> UInt32 {
        try Sodium.ready()
        return Sodium.randomUniform(upperBound)
    }
}
