import CSodium

/// The one place that initialises libsodium and draws randomness.
///
/// Every entry point of the crypto layer calls `Sodium.ready()` first; `sodium_init` is
/// idempotent and thread-safe, and the cached result makes later calls free.
package enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    /// Ensures libsodium is initialised.
    /// - Throws: `CryptoError.initializationFailed` when it cannot be.
    package static func ready() throws(CryptoError) {
        guard initialized else { throw .initializationFailed }
    }

    /// `count` bytes from libsodium's CSPRNG (`randombytes_buf`, getrandom(2) on Linux).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(initialized, "libsodium not initialised")
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 { bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) } }
        return bytes
    }

    /// A uniform random integer in `0..<upperBound` (`randombytes_uniform`, no modulo bias).
    package static func randomUniform(_ upperBound: UInt32) -> UInt32 {
        precondition(initialized, "libsodium not initialised")
        return randombytes_uniform(upperBound)
    }

    /// Constant-time comparison of two equally long buffers.
    package static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    /// Overwrites a buffer with zeros in a way the compiler cannot elide.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
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

/// Many small random numbers from few calls into libsodium: a buffer of its randomness, refilled
/// when used up (a generator drawing thousands of characters would otherwise ask the kernel for
/// each one).
public struct SecureRandomStream {
    private var buffer: [UInt8] = []
    private var offset = 0

    public init() {}

    public mutating func uint32() throws(CryptoError) -> UInt32 {
        if offset + 4 > buffer.count {
            buffer = try SecureRandom.bytes(512)
            offset = 0
        }
        defer { offset += 4 }
        return UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16 | UInt32(buffer[offset + 3]) << 24
    }

    /// Uniform in `0..<upperBound` without modulo bias, as `randombytes_uniform` draws it: values
    /// below 2³² mod `upperBound` are drawn again (less than half of the time, for any bound).
    public mutating func uniform(_ upperBound: UInt32) throws(CryptoError) -> UInt32 {
        precondition(upperBound > 0)
        let minimum = (0 &- upperBound) % upperBound
        while true {
            let value = try uint32()
            if value >= minimum { return value % upperBound }
        }
    }

    /// A double in [0, 1) from 53 random bits.
    public mutating func unitInterval() throws(CryptoError) -> Double {
        let bits = UInt64(try uint32()) << 21 ^ UInt64(try uint32() >> 11)
        return Double(bits & (1 << 53 - 1)) * 0x1p-53
    }
}
