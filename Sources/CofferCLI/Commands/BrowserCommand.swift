import Coffer
import CofferTerminalKit
import CofferBrowserHost

struct BrowserCommand: Command {
    static let subcommands = ["install", "uninstall", "status", "manifest"]
    static let name = "browser"
    static let summary = "connect Coffer's browser extension to this vault (native-messaging host manifests)"
    static let usage = "browser install|uninstall|status|manifest [--browser NAME|all] [--user-data-dir DIR] [--system] [--host PATH]"
    static let discussion = """
        'install' writes the manifest that lets Coffer's extension start coffer-browser-host, in
        the directory each browser reads: chromium, chrome, brave, edge, vivaldi, firefox, or all
        that are installed (the default). --user-data-dir writes into one Chromium profile
        directory instead, --system for every user (as root). Only Coffer's extension may connect
        (its id is fixed by the key in Browser/extension/manifest.json). A Flatpak browser gets a
        wrapper that runs the host outside its sandbox with flatpak-spawn, once you allow that;
        a Snap Chromium cannot start any host, and 'status' says so. 'manifest' prints one browser's
        manifest (--browser, --host) for packagers. Then load Browser/extension
        (chrome://extensions, Developer mode, Load unpacked; about:debugging in Firefox).
        """
    static let examples = ["coffer browser install", "coffer browser install --browser firefox", "coffer browser status"]
    static let options: [OptionSpec] = [
        .value("browser", "chromium, chrome, brave, edge, vivaldi, firefox or all (default: all installed)"),
        .value("user-data-dir", "a Chromium profile directory (what --user-data-dir gives the browser)"),
        .flag("system", "the system-wide directories (needs root)"),
        .value("host", "the coffer-browser-host to register (default: the one beside this coffer)"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let action = try context.positionals(1...1, names: "install, uninstall, status or manifest")[0]
        if action == "manifest" {
            // For packagers (scripts/install): the manifest of one browser, to write where they stage files.
            guard let name = context.arguments.value("browser"), let browser = Browser.named(name), let host = context.arguments.value("host")
            else { throw UsageError("manifest needs --browser NAME and --host PATH") }
            context.print(JSONOutput.render(browser.manifest(hostPath: host)))
            return .success
        }
        let browsers = try chosenBrowsers(context)
        switch action {
        case "install": try install(browsers, context)
        case "uninstall":
            for browser in browsers {
                for path in manifestPaths(browser, context) where (try? FileSystem.standard.userPathStatus(path)) ?? nil != nil {
                    try FileSystem.standard.removeUserFile(path)
                    context.note("\(browser.name): removed \(path)")
                }
                try FileSystem.standard.removeUserFile(wrapperPath(browser, context))
            }
        case "status": status(browsers, context)
        default: throw UsageError("expected install, uninstall, status or manifest, not '\(action.prefix(20))'")
        }
        return .success
    }

    static func chosenBrowsers(_ context: CommandContext) throws -> [Browser] {
        let name = context.arguments.value("browser") ?? (context.arguments.has("user-data-dir") ? "chromium" : "all")
        if name == "all" {
            let installed = Browser.all.filter { !$0.installations(environment: context.io.environment).isEmpty }
            guard !installed.isEmpty || context.arguments.has("system") else {
                throw CLIError("no supported browser found", hint: "name one with --browser (\(Browser.all.map(\.name).joined(separator: ", ")))", code: .noInput)
            }
            return context.arguments.has("system") ? Browser.all : installed
        }
        guard let browser = Browser.named(name) else {
            throw UsageError("unknown browser '\(name.prefix(20))'; use \(Browser.all.map(\.name).joined(separator: ", ")) or all")
        }
        return [browser]
    }

    static func install(_ browsers: [Browser], _ context: CommandContext) throws {
        let environment = context.io.environment
        let host = try hostPath(context)
        // The manifest's path takes no arguments: a chosen container goes into a small wrapper.
        let arguments = context.vaultLocationArguments
        let sharedWrapper = dataHome(environment) + "/coffer/browser-host"
        if !arguments.isEmpty {
            try FileSystem.standard.replaceUserFile(Array(BrowserRegistration.containerWrapper(hostPath: host, arguments: arguments).utf8), at: sharedWrapper, mode: 0o755)
        }
        let nativeHost = arguments.isEmpty ? host : sharedWrapper
        for browser in browsers {
            let installations = browser.installations(environment: environment)
            let explicit = context.arguments.has("user-data-dir") || context.arguments.has("system")
            if explicit || installations.contains(.native) || installations.isEmpty {
                let path = browser.manifestPath(environment: environment, userDataDirectory: context.arguments.value("user-data-dir"),
                                                system: context.arguments.has("system"))
                try write(browser.manifest(hostPath: nativeHost), to: path)
                context.note("\(browser.name): wrote \(path)")
            }
            guard !explicit else { continue }
            if installations.contains(.flatpak) {
                let wrapper = wrapperPath(browser, context)
                try FileSystem.standard.replaceUserFile(Array(BrowserRegistration.flatpakWrapper(hostPath: host, arguments: arguments).utf8), at: wrapper, mode: 0o755)
                let path = BrowserRegistration.flatpakManifestPath(browser, environment: environment)
                try write(browser.manifest(hostPath: wrapper), to: path)
                context.note("\(browser.name) (Flatpak): wrote \(path); allow it to start the host outside its sandbox with:\n"
                    + "  flatpak override --user --talk-name=org.freedesktop.Flatpak \(browser.flatpakIdentifier)")
            }
            if installations.contains(.snap) {
                context.note("\(browser.name) (Snap): \(BrowserRegistration.snapExplanation(browser))")
            }
        }
        context.note("now load the extension: Browser/extension (unpacked; its id is \(BrowserExtension.chromiumID))")
    }

    static func status(_ browsers: [Browser], _ context: CommandContext) {
        let environment = context.io.environment
        for browser in browsers {
            let installations = browser.installations(environment: environment).map(\.rawValue)
            var line = "\(browser.name): " + (installations.isEmpty ? "not found" : installations.joined(separator: ", "))
            for path in manifestPaths(browser, context) {
                guard let bytes = try? FileSystem.standard.readUserFile(path, limit: 1 << 16),
                      let manifest = (try? JSONValue.parse(bytes))?.objectValue, let host = manifest["path"]?.stringValue
                else { continue }
                let runnable = FileSystem.isExecutable(host)
                line += "\n  \(path) -> \(host)" + (runnable ? "" : " (missing or not executable: run 'coffer browser install' again)")
            }
            if !line.contains("\n  ") { line += "\n  no manifest: run 'coffer browser install --browser \(browser.name)'" }
            if installations.contains("snap") { line += "\n  Snap: " + BrowserRegistration.snapExplanation(browser) }
            context.print(line)
        }
    }

    static func manifestPaths(_ browser: Browser, _ context: CommandContext) -> [String] {
        let environment = context.io.environment
        if let directory = context.arguments.value("user-data-dir") { return [browser.manifestPath(environment: environment, userDataDirectory: directory)] }
        if context.arguments.has("system") { return [browser.manifestPath(environment: environment, system: true)] }
        return [browser.manifestPath(environment: environment), BrowserRegistration.flatpakManifestPath(browser, environment: environment)]
    }

    static func wrapperPath(_ browser: Browser, _ context: CommandContext) -> String {
        BrowserRegistration.home(context.io.environment) + "/.var/app/\(browser.flatpakIdentifier)/data/coffer/coffer-browser-host"
    }

    static func write(_ manifest: JSONValue, to path: String) throws {
        try FileSystem.standard.replaceUserFile(Array((manifest.canonicalText + "\n").utf8), at: path, mode: 0o644)
    }

    /// `--host`, else `coffer-browser-host` beside this executable, else on `$PATH`.
    static func hostPath(_ context: CommandContext) throws -> String {
        if let path = context.arguments.value("host") {
            guard path.hasPrefix("/"), FileSystem.isExecutable(path) else { throw CLIError("--host must be an absolute path to an executable", code: .usage) }
            return path
        }
        if let own = OwnExecutable.path {
            let beside = FileSystem.parentDirectory(of: own) + "/coffer-browser-host"
            if FileSystem.isExecutable(beside) { return beside }
        }
        if let onPath = context.io.environment.programPath("coffer-browser-host") { return onPath }
        throw CLIError("coffer-browser-host not found beside coffer or on PATH", hint: "build it (scripts/build) or pass --host PATH", code: .noInput)
    }


    static func dataHome(_ environment: Environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg }
        return BrowserRegistration.home(environment) + "/.local/share"
    }
}
