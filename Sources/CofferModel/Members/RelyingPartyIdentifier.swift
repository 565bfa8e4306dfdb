import CofferSupport
/// A passkey's relying party id (SPEC.md §6.4): a *domain* in canonical form — lower case,
/// A-labels, no trailing dot, never a URL and never an IP address. WebAuthn lets an rpId be the
/// origin's domain or a registrable suffix of it; for an IP address there is no such thing, and
/// a "suffix" of `10.20.30.40` such as `30.40` would let `https://99.88.30.40` sign with a
/// passkey made for another machine. One rule for the host, the provider, the record reader
/// and the importers.
public enum RelyingPartyIdentifier {
    /// Whether `text` is an rpId in canonical form: 1–253 bytes of dot-separated labels of 1–63
    /// of `a-z`, `0-9` and `-` (not first or last), whose last label is not all digits (an IPv4
    /// address, or a tail of one), and which the IDNA mapping leaves as it is.
    public static func isCanonical(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...253).contains(bytes.count) else { return false }
        var labelStart = 0
        for index in 0...bytes.count {
            guard index == bytes.count || bytes[index] == UInt8(ascii: ".") else {
                let byte = bytes[index]
                guard (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-") else { return false }
                continue
            }
            let label = bytes[labelStart..<index]
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else { return false }
            if index == bytes.count, label.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return false }
            labelStart = index + 1
        }
        return HostNames.canonicalHost(text) == text
    }

    /// The canonical rpId an export's text names — a URL's host, upper case lowered, a trailing
    /// dot dropped, a U-label as its A-label — or `nil` when it names no domain (an IP address,
    /// a port or path where none belongs, text no domain spells).
    public static func canonical(from text: String) -> String? {
        var host = Substring(text.trimmingSpaces())
        if let scheme = host.firstRange(of: "://") {
            host = host[scheme.upperBound...]
            host = host.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
            if !host.hasPrefix("["), let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...].allSatisfy(\.isNumber) {
                host = host[..<colon]
            }
        }
        guard let canonical = HostNames.canonicalHost(String(host)), isCanonical(canonical) else { return nil }
        return canonical
    }

    /// Whether a page at `host` may use passkeys at all: a domain, never an IP address (v4 or v6).
    public static func isDomain(host: String) -> Bool {
        guard !HostNames.isIPLiteral(host), let last = host.split(separator: ".").last else { return false }
        return !last.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
