import CofferSupport
import CIDN2

/// Host-name normalisation through libidn2: every host is compared in one canonical form —
/// lowercase A-labels (punycode), no trailing dot. So `Bücher.de`, `bücher.de.` and
/// `xn--bcher-kva.de` are one host, while a Cyrillic look-alike of `example.com` becomes `xn--…`
/// and never equals it. (Registrable domains, which need the Public Suffix List, are
/// `DomainNames`'.)
public enum HostNames {
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

    /// IPv6 (brackets or colons) or a dotted IPv4 quad: digits and dots only, three dots.
    public static func isIPLiteral(_ host: String) -> Bool {
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
}
