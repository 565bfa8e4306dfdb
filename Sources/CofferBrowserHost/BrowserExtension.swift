/// Who may talk to the host: Coffer's own extension, by the identities the browsers give it
/// (SPEC.md §13.1). The Chromium id is fixed by the public key in `Browser/extension/manifest.json`
/// (the first 32 hex digits of the SHA-256 of the key, mapped 0–f to a–p); Firefox's is the
/// `browser_specific_settings.gecko.id` there.
public enum BrowserExtension {
    /// The native-messaging host name the extension connects to.
    public static let hostName = "org.coffer.browser_host"
    public static let chromiumID = "dlecjfndaebcecnkcnnjndgabgahdbko"
    public static let firefoxID = "coffer@coffer.invalid"
    public static var chromiumOrigin: String { "chrome-extension://\(chromiumID)/" }

    /// Whether the command line the browser started the host with names Coffer's extension:
    /// Chromium passes the caller's origin as the first argument; Firefox passes the path of
    /// the host manifest, then the add-on id.
    public static func callerIsCoffer(_ arguments: [String]) -> Bool {
        let operands = Array(arguments.dropFirst())
        if operands.first == chromiumOrigin { return true }
        return operands.count >= 2 && operands[1] == firefoxID
    }
}
