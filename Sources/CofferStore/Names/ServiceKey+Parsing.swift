import CofferFormat
import FoundationEssentials

extension ServiceKey {
    /// Takes `service` apart (SPEC.md §8.1): canonical host through libidn2, site through libpsl.
    /// An identifier that does not parse gets a key that matches nothing, filed under its
    /// lower-cased text (so `verify` can still check where it is filed).
    public init(parsing service: CredentialServiceIdentifier) {
        var scheme = "", path = "/", hostText: String, port: UInt16 = 0
        switch service.type {
        case .URL:
            guard let components = URLComponents(string: service.identifier), let parsedScheme = components.scheme?.lowercased(),
                  let rawHost = components.host, components.port.map({ (1...65535).contains($0) }) ?? true
            else {
                self = .unparsed(site: service.identifier.lowercased())
                return
            }
            scheme = parsedScheme
            hostText = rawHost
            port = UInt16(components.port ?? 0)
            path = components.path.isEmpty ? "/" : components.path
        case .domain:
            hostText = service.identifier
            if hostText.utf8.contains(UInt8(ascii: ":")), !hostText.hasPrefix("["), let colon = hostText.lastIndex(of: ":") {
                guard let number = Int(hostText[hostText.index(after: colon)...]), (1...65535).contains(number) else {
                    self = .unparsed(site: service.identifier.lowercased())
                    return
                }
                port = UInt16(number)
                hostText = String(hostText[..<colon])
            }
        }
        guard let host = HostNames.canonicalHost(hostText) else {
            self = .unparsed(site: service.identifier.lowercased())
            return
        }
        self.init(
            site: DomainNames.registrableDomain(ofCanonicalHost: host) ?? host, host: host, scheme: scheme, port: port, path: path)
    }
}
