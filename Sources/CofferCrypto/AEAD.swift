import CSodium

/// XChaCha20-Poly1305-IETF authenticated encryption (`crypto_aead_xchacha20poly1305_ietf_*`).
///
/// Chosen over AES-GCM because its 192-bit nonce makes fresh random nonces per write safe
/// without a counter, and it is constant time without hardware support (SPEC.md §5.2).
public enum XChaCha20Poly1305 {
    public static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    public static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    public static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// A fresh random nonce.
    public static func randomNonce() throws(CryptoError) -> [UInt8] {
        try SecureRandom.bytes(nonceLength)
    }

    /// Encrypts and authenticates `plaintext`, authenticating `associatedData` too.
    /// - Returns: ciphertext followed by the 16-byte tag.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        try check(key: key, nonce: nonce)
        var output = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var outputLength: UInt64 = 0
        let status = key.withUnsafeBytes { keyBytes in
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                &output, &outputLength,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                associatedData, UInt64(associatedData.count),
                nil, nonce, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else { throw .authenticationFailed }
        return output
    }

    /// Encrypts ordinary bytes; see `seal(_:key:nonce:associatedData:)`.
    public static func seal(
        _ plaintext: [UInt8], key: SecureBytes, nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        let result = plaintext.withUnsafeBytes { buffer in
            Result { () throws(CryptoError) in try seal(buffer, key: key, nonce: nonce, associatedData: associatedData) }
        }
        return try result.get()
    }

    /// Verifies and decrypts. The plaintext lands in guarded memory.
    /// - Throws: `CryptoError.authenticationFailed` when key, nonce, ciphertext or associated data
    ///   differ in any bit from what was sealed.
    public static func open(
        _ ciphertext: ArraySlice<UInt8>, key: SecureBytes, nonce: ArraySlice<UInt8>, associatedData: [UInt8]
    ) throws(CryptoError) -> SecureBytes {
        let plaintext = try SecureBytes(count: try plaintextLength(ciphertext, key: key, nonce: nonce))
        try plaintext.withUnsafeMutableBytes { (output) throws(CryptoError) in
            try decrypt(ciphertext, key: key, nonce: nonce, associatedData: associatedData, into: output)
        }
        return plaintext
    }

    /// Verifies and decrypts into ordinary memory, for plaintexts that hold no key and are
    /// decoded at once (index shards; records, which their caller wipes), where a guarded
    /// allocation per file would dominate the cost.
    public static func openUnguarded(
        _ ciphertext: ArraySlice<UInt8>, key: SecureBytes, nonce: ArraySlice<UInt8>, associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        let length = try plaintextLength(ciphertext, key: key, nonce: nonce)
        var result: Result<Void, CryptoError> = .success(())
        let plaintext = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            // Written whole by the decryption; zeroed only if it fails, so no garbage is kept.
            result = Result { () throws(CryptoError) in
                try decrypt(ciphertext, key: key, nonce: nonce, associatedData: associatedData, into: UnsafeMutableRawBufferPointer(buffer))
            }
            if case .failure = result { buffer.initialize(repeating: 0) }
            initialized = length
        }
        try result.get()
        return plaintext
    }

    /// Verifies and decrypts `bytes[ciphertextStart...]` where it lies, the nonce being the 24
    /// bytes before it (a sealed file as read): a 9 MB listing snapshot needs no second buffer.
    /// libsodium checks the tag before it decrypts, and its stream cipher may write over its
    /// input; on failure it clears the ciphertext, so the caller's copy is gone either way.
    /// - Returns: where the plaintext now is.
    package static func openInPlace(
        _ bytes: inout [UInt8], ciphertextStart: Int, key: SecureBytes, associatedData: [UInt8]
    ) throws(CryptoError) -> Range<Int> {
        guard ciphertextStart >= nonceLength, ciphertextStart <= bytes.count else { throw .authenticationFailed }
        let length = try plaintextLength(bytes[ciphertextStart...], key: key, nonce: bytes[(ciphertextStart - nonceLength)..<ciphertextStart])
        var plaintextLength: UInt64 = 0
        let status = bytes.withUnsafeMutableBufferPointer { buffer in
            key.withUnsafeBytes { keyBytes in
                let sealed = buffer.baseAddress! + ciphertextStart
                return crypto_aead_xchacha20poly1305_ietf_decrypt(
                    sealed, &plaintextLength, nil, sealed, UInt64(length + tagLength), associatedData, UInt64(associatedData.count),
                    sealed - nonceLength, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .authenticationFailed }
        return ciphertextStart..<(ciphertextStart + length)
    }

    private static func plaintextLength(_ ciphertext: ArraySlice<UInt8>, key: SecureBytes, nonce: ArraySlice<UInt8>) throws(CryptoError) -> Int {
        try Sodium.ready()
        try check(key: key, nonce: Array(nonce))
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        return ciphertext.count - tagLength
    }

    /// The one `crypto_aead_xchacha20poly1305_ietf_decrypt` call; `output` has the plaintext's length.
    private static func decrypt(
        _ ciphertext: ArraySlice<UInt8>, key: SecureBytes, nonce: ArraySlice<UInt8>, associatedData: [UInt8],
        into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        var plaintextLength: UInt64 = 0
        let status = ciphertext.withUnsafeBufferPointer { sealed in
            nonce.withUnsafeBufferPointer { nonceBytes in
                key.withUnsafeBytes { keyBytes in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        output.baseAddress?.assumingMemoryBound(to: UInt8.self), &plaintextLength, nil,
                        sealed.baseAddress!, UInt64(sealed.count), associatedData, UInt64(associatedData.count),
                        nonceBytes.baseAddress!, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 0 else { throw .authenticationFailed }
    }

    private static func check(key: SecureBytes, nonce: [UInt8]) throws(CryptoError) {
        guard key.count == keyLength else { throw .invalidLength(expected: keyLength, actual: key.count) }
        guard nonce.count == nonceLength else { throw .invalidLength(expected: nonceLength, actual: nonce.count) }
    }
}
