import CSodium

/// libsodium's `crypto_secretstream_xchacha20poly1305`: a stream of messages each authenticated
/// in its place, so a reordered, dropped, repeated or foreign message fails and the last one is
/// marked (a stream cut short lacks it). Attachments are written in it, chunk by chunk, in
/// constant memory (SPEC.md §6.7).
public final class SecretStream {
    public static let keyLength = Int(crypto_secretstream_xchacha20poly1305_keybytes())
    public static let headerLength = Int(crypto_secretstream_xchacha20poly1305_headerbytes())
    /// What each message adds: its tag byte and a 16-byte MAC.
    public static let overhead = Int(crypto_secretstream_xchacha20poly1305_abytes())

    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>

    private init() throws(CryptoError) {
        try Sodium.ready()
        state = .allocate(capacity: 1)
    }

    deinit {
        Sodium.wipe(UnsafeMutableRawBufferPointer(start: state, count: MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size))
        state.deallocate()
    }

    /// A stream to write under `key`, and the header a reader needs first.
    public static func pushing(key: SecureBytes) throws(CryptoError) -> (stream: SecretStream, header: [UInt8]) {
        guard key.count == keyLength else { throw .invalidLength(expected: keyLength, actual: key.count) }
        let stream = try SecretStream()
        var header = [UInt8](repeating: 0, count: headerLength)
        _ = key.withUnsafeBytes { crypto_secretstream_xchacha20poly1305_init_push(stream.state, &header, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return (stream, header)
    }

    /// A stream to read under `key`, from its `header`.
    /// - Throws: `authenticationFailed` for a header of the wrong length or a refused one.
    public static func pulling(key: SecureBytes, header: ArraySlice<UInt8>) throws(CryptoError) -> SecretStream {
        guard key.count == keyLength else { throw .invalidLength(expected: keyLength, actual: key.count) }
        guard header.count == headerLength else { throw .authenticationFailed }
        let stream = try SecretStream()
        let status = key.withUnsafeBytes { keyBytes in
            header.withUnsafeBufferPointer {
                crypto_secretstream_xchacha20poly1305_init_pull(stream.state, $0.baseAddress!, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .authenticationFailed }
        return stream
    }

    /// Encrypts one message into `output` (`plaintext.count + overhead` bytes), the last one
    /// when `final`.
    public func push(_ plaintext: UnsafeRawBufferPointer, final: Bool, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= plaintext.count + Self.overhead)
        let tag = final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
        crypto_secretstream_xchacha20poly1305_push(
            state, output.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count), nil, 0, tag)
    }

    /// Decrypts one message into `output` (`ciphertext.count - overhead` bytes).
    /// - Returns: whether it is marked as the last.
    /// - Throws: `authenticationFailed` when it is not the next message of this stream, or is
    ///   marked with a tag Coffer never writes.
    public func pull(_ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) -> Bool {
        guard ciphertext.count >= Self.overhead, output.count >= ciphertext.count - Self.overhead else { throw .authenticationFailed }
        var tag: UInt8 = 0
        let status = crypto_secretstream_xchacha20poly1305_pull(
            state, output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, &tag,
            ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count), nil, 0)
        guard status == 0 else { throw .authenticationFailed }
        switch tag {
        case crypto_secretstream_xchacha20poly1305_tag_final(): return true
        case crypto_secretstream_xchacha20poly1305_tag_message(): return false
        default: throw .authenticationFailed
        }
    }
}
