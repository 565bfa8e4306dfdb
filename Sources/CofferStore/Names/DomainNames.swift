import CPSL
import CofferFormat

/// Registrable domains through libpsl (Debian's libpsl reads the system Public Suffix List,
/// `/usr/share/publicsuffix`), of hosts in `HostNames`' canonical form.
public enum DomainNames {
    /// The registrable domain (eTLD+1) of a canonical host: `login.example.co.uk` →
    /// `example.co.uk`. `nil` for a public suffix itself, a single label or an IP literal.
    public static func registrableDomain(ofCanonicalHost host: String) -> String? {
        guard !HostNames.isIPLiteral(host), let list = publicSuffixList.context else { return nil }
        // psl_registrable_domain returns a pointer *into* its argument: the C string must stay
        // alive while we copy from it (found by the ThreadSanitizer run as a use-after-free).
        return host.withCString { cHost in
            psl_registrable_domain(list, cHost).map { String(cString: $0) }
        }
    }

    /// Whether the list was loaded; without it only exact host matches are made.
    public static var hasPublicSuffixList: Bool { publicSuffixList.context != nil }

    /// libpsl's newest list (the system's DAFSA if newer than the built-in one), loaded once.
    /// `psl_ctx_t` is read-only after loading, so sharing it between threads is safe.
    private static let publicSuffixList = LoadedList()

    private final class LoadedList: @unchecked Sendable {
        let context: OpaquePointer?
        init() { context = psl_latest(nil) ?? psl_builtin() }
    }
}
