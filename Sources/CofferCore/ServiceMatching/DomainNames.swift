import CIDN2
import CPSL
import Glibc

/// Host-name normalisation and registrable domains, through libidn2 and libpsl (Debian's
/// libpsl reads the system Public Suffix List, `/usr/share/publicsuffix`).
///
/// Every host is compared in one canonical form: lowercase A-labels (punycode), no trailing
/// dot. So `Bücher.de`, `bücher.de.` and `xn--bcher-kva.de` are one host, while a Cyrillic
/// look-alike of `example.com` becomes `xn--…` and never equals it.
public enum DomainNames {
    /// The canonical form of `host`, or `nil` if it is not a valid host name or IP literal.
    public static func canonicalHost(_ host: String) -> String? {
        var name = host
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return nil }
        if isIPLiteral(name) { return name.lowercased() }
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            // Byte-level fast path for the common ASCII case: lower-case and validate in one pass.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(name.utf8.count)
            var previous: UInt8 = UInt8(ascii: ".")
            for byte in name.utf8 {
                let lower = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte
                guard isHostByte(lower), !(lower == UInt8(ascii: ".") && previous == UInt8(ascii: ".")) else { return nil }
                bytes.append(lower)
                previous = lower
            }
            guard bytes.first != UInt8(ascii: "-") else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        var output: UnsafeMutablePointer<CChar>?
        let flags = Int32(IDN2_NFC_INPUT.rawValue | IDN2_NONTRANSITIONAL.rawValue)
        guard idn2_to_ascii_8z(name, &output, flags) == Int32(IDN2_OK.rawValue), let output else { return nil }
        defer { idn2_free(output) }
        let ascii = String(cString: output).lowercased()
        return ascii.utf8.allSatisfy(isHostByte) ? ascii : nil
    }

    /// The registrable domain (eTLD+1) of a canonical host: `login.example.co.uk` →
    /// `example.co.uk`. `nil` for a public suffix itself, a single label or an IP literal.
    public static func registrableDomain(ofCanonicalHost host: String) -> String? {
        guard !isIPLiteral(host), let list = publicSuffixList.context else { return nil }
        // psl_registrable_domain returns a pointer *into* its argument: the C string must stay
        // alive while we copy from it (found by the ThreadSanitizer run as a use-after-free).
        return host.withCString { cHost in
            psl_registrable_domain(list, cHost).map { String(cString: $0) }
        }
    }

    /// Whether the list was loaded; without it only exact host matches are made.
    public static var hasPublicSuffixList: Bool { publicSuffixList.context != nil }

    /// IPv6 (brackets or colons) or a dotted IPv4 quad: digits and dots only, three dots.
    static func isIPLiteral(_ host: String) -> Bool {
        var dots = 0
        for byte in host.utf8 {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: ":") { return true }
            if byte == UInt8(ascii: ".") { dots += 1 } else if byte < 0x30 || byte > 0x39 { return false }
        }
        return dots == 3
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }

    /// libpsl's newest list (the system's DAFSA if newer than the built-in one), loaded once.
    /// `psl_ctx_t` is read-only after loading, so sharing it between threads is safe.
    private static let publicSuffixList = LoadedList()

    private final class LoadedList: @unchecked Sendable {
        let context: OpaquePointer?
        init() { context = psl_latest(nil) ?? psl_builtin() }
    }
}
