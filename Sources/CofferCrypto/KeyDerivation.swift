import CofferSupport
import CSodium

/// Per-purpose subkeys of the vault key (`crypto_kdf_derive_from_key`, BLAKE2b under the hood).
///
/// One vault key, many independent keys: compromising one purpose's subkey (say, the index key
/// kept on the device) says nothing about the others. SPEC.md §5.1 lists the ids.
public enum SubkeyDerivation {
    /// The 8-byte `crypto_kdf` context shared by every Coffer v1 subkey.
    public static let context = "COFFERv1"

    /// Derives the subkey with `id` from `masterKey`.
    public static func derive(_ id: UInt64, from masterKey: SecureBytes, length: Int = 32) throws(CryptoError) -> SecureBytes {
        try Sodium.ready()
        guard masterKey.count == Int(crypto_kdf_KEYBYTES) else {
            throw .invalidLength(expected: Int(crypto_kdf_KEYBYTES), actual: masterKey.count)
        }
        let subkey = try SecureBytes(count: length)
        let status = masterKey.withUnsafeBytes { master in
            subkey.withUnsafeMutableBytes { output in
                crypto_kdf_derive_from_key(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count, id, context,
                    master.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .invalidLength(expected: 32, actual: length) }
        return subkey
    }
}

/// BLAKE2b (`crypto_generichash`), plain or keyed.
public enum BLAKE2b {
    /// A `length`-byte digest of `bytes`, keyed when `key` is given.
    public static func hash<Bytes: ContiguousBytesCollection>(
        _ bytes: Bytes, key: SecureBytes? = nil, length: Int = 32
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        var digest = [UInt8](repeating: 0, count: length)
        let status: Int32 = bytes.withContiguousBytes { input in
            func run(_ keyBytes: UnsafeRawBufferPointer?) -> Int32 {
                crypto_generichash(
                    &digest, length, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                    keyBytes?.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes?.count ?? 0)
            }
            if let key { return key.withUnsafeBytes { run($0) } }
            return run(nil)
        }
        guard status == 0 else { throw .invalidLength(expected: 32, actual: length) }
        return digest
    }
}

extension BLAKE2b {
    /// BLAKE2b over bytes that arrive in pieces (`crypto_generichash_init/update/final`).
    public final class Hasher {
        /// libsodium's state is 64-byte aligned, which Swift does not import as a type.
        private let state: UnsafeMutableRawPointer
        private let length: Int

        public init(length: Int = 32) throws(CryptoError) {
            try Sodium.ready()
            self.length = length
            state = .allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
            guard crypto_generichash_init(OpaquePointer(state), nil, 0, length) == 0 else {
                state.deallocate()
                throw .invalidLength(expected: 32, actual: length)
            }
        }

        deinit { state.deallocate() }

        public func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            crypto_generichash_update(OpaquePointer(state), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        public func finish() -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: length)
            crypto_generichash_final(OpaquePointer(state), &digest, length)
            return digest
        }
    }
}
