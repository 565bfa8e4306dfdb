import CSodium

/// HMAC (RFC 2104) for one-time codes (RFC 4226 §5.2). SHA-256 and SHA-512 are libsodium's;
/// libsodium has no SHA-1, so HMAC-SHA-1 is built here on `SHA1`. Used only where liboath cannot
/// produce a code itself (9 and 10 digits, Steam Guard); `OneTimeCodeTests` checks it against
/// liboath wherever both can answer.
public enum HMAC {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha512 = "SHA512"
    }

    public static func authenticate(_ message: [UInt8], key: [UInt8], algorithm: Algorithm) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        switch algorithm {
        case .sha1:
            return sha1(message, key: key)
        case .sha256:
            var state = crypto_auth_hmacsha256_state()
            var tag = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
            crypto_auth_hmacsha256_init(&state, key, key.count)
            crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
            crypto_auth_hmacsha256_final(&state, &tag)
            return tag
        case .sha512:
            var state = crypto_auth_hmacsha512_state()
            var tag = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha512_BYTES))
            crypto_auth_hmacsha512_init(&state, key, key.count)
            crypto_auth_hmacsha512_update(&state, message, UInt64(message.count))
            crypto_auth_hmacsha512_final(&state, &tag)
            return tag
        }
    }

    private static func sha1(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? SHA1.hash(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA1.hash(block.map { $0 ^ 0x36 } + message)
        return SHA1.hash(block.map { $0 ^ 0x5C } + inner)
    }
}

/// SHA-1 (FIPS 180-4 §6.1), only as HMAC-SHA-1's hash for one-time codes, where its collision
/// weakness does not matter (RFC 6151 §2). Branch-free on data, so it leaks no timing of the key.
package enum SHA1 {
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let j = chunk + 4 * i
                w[i] = UInt32(padded[j]) << 24 | UInt32(padded[j + 1]) << 16 | UInt32(padded[j + 2]) << 8 | UInt32(padded[j + 3])
            }
            for i in 16..<80 { w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotatedLeft(1) }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = a.rotatedLeft(5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b.rotatedLeft(30), a, temp)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        return [h.0, h.1, h.2, h.3, h.4].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
    }
}

private extension UInt32 {
    func rotatedLeft(_ count: UInt32) -> UInt32 { self << count | self >> (32 - count) }
}
