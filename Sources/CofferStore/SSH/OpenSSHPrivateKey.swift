import CofferFormat
/// OpenSSH's private key file (`openssh-key-v1`, OpenSSH's PROTOCOL.key) for one Ed25519 key:
/// what `ssh-keygen -t ed25519` writes and what an ssh-key item keeps, sealed, in its
/// `privateKey` field (SPEC.md §6.3). Only unencrypted files are read here: the record's seal is
/// the encryption. An encrypted file is reported as such so the CLI can have `ssh-keygen` take the
/// passphrase off first.
public enum OpenSSHPrivateKey {
    static let header = "-----BEGIN OPENSSH PRIVATE KEY-----"
    static let footer = "-----END OPENSSH PRIVATE KEY-----"
    static let magic = Array("openssh-key-v1".utf8) + [0]

    /// The key and its comment from a PEM-armoured `openssh-key-v1` file.
    public static func decode(_ text: String) throws(OpenSSHKeyError) -> (key: Ed25519SigningKey, comment: String) {
        guard let body = armouredBody(text) else { throw .notAPrivateKey }
        guard let decoded = Base64.decodeSecret(body) else { throw .malformed("the key is not base64") }
        do {
            return try decoded.withUnsafeBytes { buffer in try parse(buffer) }
        } catch {
            if let error = error as? OpenSSHKeyError { throw error }
            throw .malformed("\(error)")
        }
    }

    /// Whether `text` is an `openssh-key-v1` file protected by a passphrase.
    public static func isEncrypted(_ text: String) -> Bool {
        guard let body = armouredBody(text), let bytes = Base64.decode(body) else { return false }
        return bytes.withUnsafeBytes { buffer in
            var reader = SSHWireReader(UnsafeRawBufferPointer(rebasing: buffer.dropFirst(magic.count)))
            guard buffer.starts(with: magic), let cipher = try? reader.text() else { return false }
            return cipher != "none"
        }
    }

    /// The PEM-armoured file, as `ssh-keygen` writes it (70 base64 characters a line).
    public static func encode(_ key: Ed25519SigningKey, comment: String) throws(CryptoError) -> String {
        let publicKey = SSHPublicKey(ed25519: key.publicKey)
        let check = try SecureRandom.bytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var section = SSHWireWriter()
        section.uint32(check)
        section.uint32(check)
        section.string(SSHPublicKey.ed25519Type)
        section.string(key.publicKey)
        key.withSecretKey { section.string(Array($0)) }
        section.string(comment)
        var pad: UInt8 = 1
        while section.bytes.count % 8 != 0 { section.byte(pad); pad += 1 }
        var file = SSHWireWriter()
        for byte in magic { file.byte(byte) }
        file.string("none")
        file.string("none")
        file.string([UInt8]())
        file.uint32(1)
        file.string(publicKey.blob)
        file.string(section.bytes)
        section.wipe()
        var encoded = Array(Base64.encode(file.bytes).utf8)
        file.wipe()
        var lines = header + "\n"
        var start = 0
        while start < encoded.count {
            let end = min(start + 70, encoded.count)
            lines += String(decoding: encoded[start..<end], as: UTF8.self) + "\n"
            start = end
        }
        for index in encoded.indices { encoded[index] = 0 }
        return lines + footer + "\n"
    }

    /// The base64 between the armour lines, without line breaks.
    private static func armouredBody(_ text: String) -> String? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }
        guard let first = lines.firstIndex(of: header), let last = lines.lastIndex(of: footer), first < last else { return nil }
        return lines[(first + 1)..<last].joined()
    }

    private static func parse(_ buffer: UnsafeRawBufferPointer) throws -> (key: Ed25519SigningKey, comment: String) {
        guard buffer.starts(with: magic) else { throw OpenSSHKeyError.notAPrivateKey }
        var reader = SSHWireReader(UnsafeRawBufferPointer(rebasing: buffer.dropFirst(magic.count)))
        let cipher = try reader.text(), kdf = try reader.text()
        _ = try reader.stringBytes()  // KDF options
        guard cipher == "none", kdf == "none" else { throw OpenSSHKeyError.encrypted }
        guard try reader.uint32() == 1 else { throw OpenSSHKeyError.malformed("a key file must hold exactly one key") }
        let publicBlob = try reader.string()
        let section = try reader.stringBytes()
        guard reader.isAtEnd else { throw OpenSSHKeyError.malformed("bytes after the private section") }
        var keys = SSHWireReader(section)
        guard try keys.uint32() == keys.uint32() else { throw OpenSSHKeyError.malformed("the check numbers differ (a wrong passphrase?)") }
        let type = try keys.text()
        guard type == SSHPublicKey.ed25519Type else { throw OpenSSHKeyError.unsupportedKeyType(type) }
        let publicKey = try keys.string()
        let secretBytes = try keys.stringBytes()
        let comment = try keys.text()
        var pad: UInt8 = 1
        while !keys.isAtEnd {
            guard try keys.byte() == pad, pad < 8 else { throw OpenSSHKeyError.malformed("bad padding") }
            pad += 1
        }
        guard SSHPublicKey(blob: publicBlob)?.ed25519Key == publicKey else { throw OpenSSHKeyError.malformed("the public key does not match the private one") }
        let secret = try SecureBytes(copying: secretBytes)
        do {
            return (try Ed25519SigningKey(secretKey: secret, publicKey: publicKey), comment)
        } catch {
            throw OpenSSHKeyError.malformed("the public key does not match the private one")
        }
    }
}

public enum OpenSSHKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    case notAPrivateKey
    case encrypted
    case unsupportedKeyType(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .notAPrivateKey: "not an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY-----)"
        case .encrypted: "the key file is protected by a passphrase"
        case .unsupportedKeyType(let type):
            "\(type.prefix(40)) keys are not supported yet (Ed25519 only: ssh-keygen -t ed25519, or 'coffer ssh-key add NAME')"
        case .malformed(let reason): "the key file is malformed: \(reason)"
        }
    }
}
