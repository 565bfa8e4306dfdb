import CofferFormat
import COath
import FoundationEssentials

/// A code and, for time-based codes, how long it stays valid.
public struct OneTimeCode: Equatable, Sendable {
    public let code: String
    /// Seconds per code; `nil` for HOTP.
    public let period: Int?
    /// Seconds until the next code; `nil` for HOTP.
    public let remaining: Int?
}

/// Computes one-time codes. RFC 6238 and RFC 4226 codes of 6–8 digits come from liboath (HOTP
/// as TOTP with a one-second step and the counter as the time, which is RFC 6238's definition,
/// so SHA-256 and SHA-512 HOTP work too). liboath stops at 8 digits and knows no Steam Guard:
/// those take the RFC 4226 §5.3 truncation here, over `HMAC`.
extension OneTimeCodeParameters {
    /// The TOTP or Steam code for `date`.
    public func code(at date: Date) throws(OneTimeCodeError) -> OneTimeCode {
        guard kind != .hotp else { throw .generationFailed("an HOTP code needs its counter") }
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        guard seconds >= 0 else { throw .generationFailed("a time before 1970") }
        let step = UInt64(seconds) / UInt64(period)
        let code = try value(movingFactor: step)
        return OneTimeCode(code: code, period: period, remaining: period - Int(UInt64(seconds) % UInt64(period)))
    }

    /// The HOTP code for the current counter (the caller then stores `advanced()`).
    public func hotpCode() throws(OneTimeCodeError) -> OneTimeCode {
        guard kind == .hotp else { throw .generationFailed("a time-based code has no counter") }
        return OneTimeCode(code: try value(movingFactor: counter), period: nil, remaining: nil)
    }

    /// The code for HOTP counter (or TOTP time step) `movingFactor`.
    func value(movingFactor: UInt64) throws(OneTimeCodeError) -> String {
        if kind != .steam && digits <= 8 { return try oathCode(movingFactor: movingFactor) }
        let binary = try truncatedValue(movingFactor: movingFactor)
        if kind == .steam { return Self.steamCode(binary) }
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let number = String(UInt64(binary) % modulus)
        return String(repeating: "0", count: digits - number.count) + number
    }

    private func oathCode(movingFactor: UInt64) throws(OneTimeCodeError) -> String {
        guard movingFactor <= UInt64(Int.max) else { throw .generationFailed("counter out of range") }
        let flags: Int32 = switch algorithm {
        case .sha1: 0
        case .sha256: Int32(OATH_TOTP_HMAC_SHA256.rawValue)
        case .sha512: Int32(OATH_TOTP_HMAC_SHA512.rawValue)
        }
        var output = [CChar](repeating: 0, count: 16)
        let status = secret.withUnsafeBufferPointer { key in
            key.withMemoryRebound(to: CChar.self) { key in
                oath_totp_generate2(key.baseAddress, key.count, time_t(movingFactor), 1, 0, UInt32(digits), flags, &output)
            }
        }
        guard status == Int32(OATH_OK.rawValue) else { throw .generationFailed(String(cString: oath_strerror(status))) }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// RFC 4226 §5.3: HMAC of the big-endian counter, dynamic truncation to 31 bits.
    func truncatedValue(movingFactor: UInt64) throws(OneTimeCodeError) -> UInt32 {
        let message = (0..<8).map { UInt8(truncatingIfNeeded: movingFactor >> UInt64(56 - 8 * $0)) }
        let mac: [UInt8]
        do { mac = try HMAC.authenticate(message, key: secret, algorithm: algorithm) } catch {
            throw .generationFailed("\(error)")
        }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        return (UInt32(mac[offset]) & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
    }

    /// Steam Guard's alphabet has no vowels or look-alikes; five characters, least significant first.
    static func steamCode(_ value: UInt32) -> String {
        let alphabet = Array("23456789BCDFGHJKMNPQRTVWXY")
        var remaining = value
        var code = ""
        for _ in 0..<5 {
            code.append(alphabet[Int(remaining % 26)])
            remaining /= 26
        }
        return code
    }
}
