import CSodium

/// Secret bytes in guarded memory: `sodium_malloc`ed (guard pages, `mlock`ed so they are not
/// swapped, left out of core dumps), wiped on release, never printed, compared in constant time.
/// Secrets of up to 64 bytes share one such page (`SecretSlots`); longer ones get their own.
///
/// Keys and master passwords live here. The bytes are reachable only through
/// `withUnsafeBytes`, so a secret cannot leak through `description`, string interpolation or a
/// `Codable` conformance by accident.
///
/// - Warning: bytes copied out of the closure (into an `Array`, a `String`, a `Data`) are ordinary
///   memory again and are not wiped.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the storage is written only during initialisation (or through
    // `withUnsafeMutableBytes` by the owner before it is shared) and freed in deinit.
    private let storage: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` zeroed secret bytes.
    /// - Throws: `CryptoError.allocationFailed` when guarded memory is exhausted.
    public init(count: Int) throws(CryptoError) {
        try Sodium.ready()
        if count <= SecretSlots.slotLength, let slot = SecretSlots.take() {
            storage = slot
        } else {
            guard let pointer = sodium_malloc(Swift.max(count, 1)) else { throw .allocationFailed }
            sodium_memzero(pointer, Swift.max(count, 1))
            storage = pointer
        }
        self.count = count
    }

    /// Copies `bytes` into guarded memory. The caller should wipe its own copy where it can.
    public convenience init<Bytes: Collection>(copying bytes: Bytes) throws(CryptoError) where Bytes.Element == UInt8 {
        try self.init(count: bytes.count)
        withUnsafeMutableBytes { destination in destination.copyBytes(from: bytes) }
    }

    /// Fresh random secret bytes.
    public static func random(count: Int) throws(CryptoError) -> SecureBytes {
        let secret = try SecureBytes(count: count)
        secret.withUnsafeMutableBytes { if $0.count > 0 { randombytes_buf($0.baseAddress!, $0.count) } }
        return secret
    }

    deinit {
        // Both wipe before the memory is reused or unmapped.
        if SecretSlots.owns(storage) { SecretSlots.release(storage) } else { sodium_free(storage) }
    }

    /// Calls `body` with read-only access to the secret bytes.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Calls `body` with write access; for filling a freshly allocated secret.
    public func withUnsafeMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeMutableRawBufferPointer(start: storage, count: count))
    }
}

extension SecureBytes: Equatable {
    /// Constant-time comparison (`sodium_memcmp`); lengths are not secret.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}
