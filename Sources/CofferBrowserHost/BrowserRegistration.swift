import CofferProvider
import CofferHostKit

/// Where each browser reads native-messaging host manifests, and what Coffer's says (SPEC.md
/// §13.1): the one place that knows browser paths, used by `coffer browser install`,
/// `uninstall` and `status` (and by the packaging step).
///
/// Chromium-family browsers read `<config>/NativeMessagingHosts/<name>.json` (or
/// `<user-data-dir>/NativeMessagingHosts/` for a given profile directory) with `allowed_origins`;
/// Firefox reads `~/.mozilla/native-messaging-hosts/<name>.json` with `allowed_extensions`.
/// Flatpak and Snap builds see neither the host nor the vault from their sandboxes; see
/// `Sandbox`.
public struct Browser: Sendable, Equatable {
    public let name: String
    /// Below `$XDG_CONFIG_HOME` (Chromium family) or `$HOME` (Firefox).
    let userDirectory: String
    let systemDirectory: String
    public let isFirefox: Bool
    let flatpakID: String
    /// Where a Flatpak build reads manifests, below `~/.var/app/<id>/`.
    let flatpakDirectory: String
    let snapName: String?
    /// Programs whose presence on `$PATH` means the browser is installed natively.
    let executables: [String]

    public static let all: [Browser] = [
        Browser(name: "chromium", userDirectory: "chromium/NativeMessagingHosts", systemDirectory: "/etc/chromium/native-messaging-hosts",
                isFirefox: false, flatpakID: "org.chromium.Chromium", flatpakDirectory: "config/chromium/NativeMessagingHosts",
                snapName: "chromium", executables: ["chromium", "chromium-browser"]),
        Browser(name: "chrome", userDirectory: "google-chrome/NativeMessagingHosts", systemDirectory: "/etc/opt/chrome/native-messaging-hosts",
                isFirefox: false, flatpakID: "com.google.Chrome", flatpakDirectory: "config/google-chrome/NativeMessagingHosts",
                snapName: nil, executables: ["google-chrome", "google-chrome-stable"]),
        Browser(name: "brave", userDirectory: "BraveSoftware/Brave-Browser/NativeMessagingHosts",
                systemDirectory: "/etc/opt/chrome/native-messaging-hosts", isFirefox: false, flatpakID: "com.brave.Browser",
                flatpakDirectory: "config/BraveSoftware/Brave-Browser/NativeMessagingHosts", snapName: "brave", executables: ["brave-browser", "brave"]),
        Browser(name: "edge", userDirectory: "microsoft-edge/NativeMessagingHosts", systemDirectory: "/etc/opt/edge/native-messaging-hosts",
                isFirefox: false, flatpakID: "com.microsoft.Edge", flatpakDirectory: "config/microsoft-edge/NativeMessagingHosts",
                snapName: nil, executables: ["microsoft-edge", "microsoft-edge-stable"]),
        Browser(name: "vivaldi", userDirectory: "vivaldi/NativeMessagingHosts", systemDirectory: "/etc/opt/vivaldi/native-messaging-hosts",
                isFirefox: false, flatpakID: "com.vivaldi.Vivaldi", flatpakDirectory: "config/vivaldi/NativeMessagingHosts",
                snapName: nil, executables: ["vivaldi", "vivaldi-stable"]),
        Browser(name: "firefox", userDirectory: ".mozilla/native-messaging-hosts", systemDirectory: "/usr/lib/mozilla/native-messaging-hosts",
                isFirefox: true, flatpakID: "org.mozilla.firefox", flatpakDirectory: ".mozilla/native-messaging-hosts",
                snapName: "firefox", executables: ["firefox", "firefox-esr"]),
    ]

    public static func named(_ name: String) -> Browser? { all.first { $0.name == name } }

    static let manifestName = BrowserExtension.hostName + ".json"

    /// The manifest file for this browser: a given Chromium profile directory, the system
    /// directory, or the user's.
    public func manifestPath(environment: Environment, userDataDirectory: String? = nil, system: Bool = false) -> String {
        if let userDataDirectory { return userDataDirectory + "/NativeMessagingHosts/" + Self.manifestName }
        if system { return systemDirectory + "/" + Self.manifestName }
        let base = isFirefox ? BrowserRegistration.home(environment) : BrowserRegistration.configHome(environment)
        return base + "/" + userDirectory + "/" + Self.manifestName
    }

    /// The manifest's JSON: the host's absolute path and only Coffer's extension allowed.
    public func manifest(hostPath: String) -> JSONValue {
        var members: JSONObject = [
            "name": .string(BrowserExtension.hostName), "description": "Coffer: logins from your vault", "path": .string(hostPath),
            "type": "stdio",
        ]
        if isFirefox {
            members["allowed_extensions"] = [.string(BrowserExtension.firefoxID)]
        } else {
            members["allowed_origins"] = [.string(BrowserExtension.chromiumOrigin)]
        }
        return .object(members)
    }

    /// How this browser is installed on this machine.
    public func installations(environment: Environment) -> [Installation] {
        var found: [Installation] = []
        if executables.contains(where: { BrowserRegistration.onPath($0, environment) }) { found.append(.native) }
        let home = BrowserRegistration.home(environment)
        if BrowserRegistration.exists(home + "/.var/app/" + flatpakID) || BrowserRegistration.exists("/var/lib/flatpak/app/" + flatpakID) {
            found.append(.flatpak)
        }
        if let snapName, BrowserRegistration.exists("/snap/" + snapName) || BrowserRegistration.exists(home + "/snap/" + snapName) {
            found.append(.snap)
        }
        return found
    }

    public enum Installation: String, Sendable { case native, flatpak, snap }

    /// The Flatpak application id (`org.mozilla.firefox`, …).
    public var flatpakIdentifier: String { flatpakID }
}

/// Installing, removing and inspecting the host manifests.
public enum BrowserRegistration {
    static func configHome(_ environment: Environment) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg }
        return home(environment) + "/.config"
    }

    public static func home(_ environment: Environment) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/"
    }

    static func exists(_ path: String) -> Bool {
        FileSystem.exists(path)
    }

    static func onPath(_ program: String, _ environment: Environment) -> Bool {
        environment.programPath(program) != nil
    }

    /// The wrapper a Flatpak browser starts instead of the host: it runs the host outside the
    /// sandbox with `flatpak-spawn --host`, which the browser may only do after
    /// `flatpak override --user --talk-name=org.freedesktop.Flatpak <app id>`. Without that the
    /// sandbox hides the vault, denies the kernel keyring (`keyctl`) that unlock sessions use,
    /// and has no pinentry: the host cannot work inside it.
    public static func flatpakWrapper(hostPath: String, arguments: [String]) -> String {
        let quoted = ([hostPath] + arguments).map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        return "#!/bin/sh\n# Written by 'coffer browser install': runs Coffer's host outside the Flatpak sandbox.\nexec flatpak-spawn --host \(quoted) \"$@\"\n"
    }

    /// The wrapper that gives the host a container other than the default (the manifest's
    /// `path` takes no arguments).
    public static func containerWrapper(hostPath: String, arguments: [String]) -> String {
        let quoted = ([hostPath] + arguments).map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        return "#!/bin/sh\n# Written by 'coffer browser install': Coffer's host for a chosen container.\nexec \(quoted) \"$@\"\n"
    }

    /// Where a Flatpak build of `browser` reads manifests.
    public static func flatpakManifestPath(_ browser: Browser, environment: Environment) -> String {
        home(environment) + "/.var/app/\(browser.flatpakID)/\(browser.flatpakDirectory)/" + Browser.manifestName
    }

    /// Why a Snap build cannot be served, in words a person can act on.
    public static func snapExplanation(_ browser: Browser) -> String {
        browser.isFirefox
            ? "Firefox from Snap reaches native hosts only through the xdg-desktop-portal native-messaging portal, which reads ~/.mozilla/native-messaging-hosts (installed for it) and asks you to allow Coffer on first use; without that portal (before Ubuntu 22.04's) it cannot start the host"
            : "\(browser.name) from Snap runs strictly confined and may not start programs outside its snap, so no native-messaging host works with it; install the Debian package (apt install chromium) or use Firefox"
    }
}
