import Coffer
import CofferBrowserHost
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// `coffer browser install|uninstall|status`: manifests where each browser reads them, only
/// Coffer's extension allowed, a wrapper for a chosen container, Flatpak and Snap told apart.
final class BrowserCommandTests: XCTestCase {
    func harness() -> (CLIHarness, String, String) {
        let cli = CLIHarness()
        let home = cli.environment["HOME"]!
        let host = home + "/bin/coffer-browser-host"
        try? FileManager.default.createDirectory(atPath: home + "/bin", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: host, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        return (cli, home, host)
    }

    func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    func testManifestsForAProfileChromiumAndFirefox() throws {
        let (cli, home, host) = harness()
        let profile = home + "/profile"
        let installed = cli.run(["browser", "install", "--user-data-dir", profile, "--host", host], container: false)
        XCTAssertEqual(installed.code, 0, installed.stderr)
        let chromium = try json(profile + "/NativeMessagingHosts/org.coffer.browser_host.json")
        XCTAssertEqual(chromium["path"] as? String, host)
        XCTAssertEqual(chromium["type"] as? String, "stdio")
        XCTAssertEqual(chromium["allowed_origins"] as? [String], ["chrome-extension://\(BrowserExtension.chromiumID)/"], "only Coffer's extension")

        XCTAssertEqual(cli.run(["browser", "install", "--browser", "firefox", "--host", host], container: false).code, 0)
        let firefox = try json(home + "/.mozilla/native-messaging-hosts/org.coffer.browser_host.json")
        XCTAssertEqual(firefox["allowed_extensions"] as? [String], [BrowserExtension.firefoxID])
        XCTAssertNil(firefox["allowed_origins"])

        let status = cli.run(["browser", "status", "--browser", "firefox"], container: false)
        XCTAssertTrue(status.stdout.contains(home + "/.mozilla/native-messaging-hosts/org.coffer.browser_host.json -> " + host), status.stdout)
        XCTAssertEqual(cli.run(["browser", "uninstall", "--browser", "firefox"], container: false).code, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/.mozilla/native-messaging-hosts/org.coffer.browser_host.json"))
        XCTAssertTrue(cli.run(["browser", "status", "--browser", "firefox"], container: false).stdout.contains("no manifest"))
        XCTAssertEqual(cli.run(["browser", "install", "--browser", "netscape"], container: false).code, 64)
        XCTAssertEqual(cli.run(["browser", "install", "--browser", "firefox", "--host", "relative/host"], container: false).code, 64)
    }

    func testAChosenContainerGoesIntoAWrapper() throws {
        let (cli, home, host) = harness()
        XCTAssertEqual(cli.run(["browser", "install", "--browser", "chromium", "--host", host], container: true).code, 0)
        let manifest = try json(home + "/.config/chromium/NativeMessagingHosts/org.coffer.browser_host.json")
        let wrapper = try XCTUnwrap(manifest["path"] as? String)
        XCTAssertEqual(wrapper, home + "/data/coffer/browser-host")
        let script = try String(contentsOfFile: wrapper, encoding: .utf8)
        XCTAssertTrue(script.contains("exec '\(host)' '--container' '\(cli.container)' \"$@\""), script)
        XCTAssertNotEqual(access(wrapper, X_OK), -1)
    }

    func testFlatpakGetsAWrapperAndSnapChromiumAnExplanation() throws {
        let (cli, home, host) = harness()
        try FileManager.default.createDirectory(atPath: home + "/.var/app/org.mozilla.firefox", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/snap/chromium", withIntermediateDirectories: true)
        let firefox = cli.run(["browser", "install", "--browser", "firefox", "--host", host], container: false)
        XCTAssertEqual(firefox.code, 0, firefox.stderr)
        XCTAssertTrue(firefox.stderr.contains("flatpak override --user --talk-name=org.freedesktop.Flatpak org.mozilla.firefox"), firefox.stderr)
        let manifest = try json(home + "/.var/app/org.mozilla.firefox/.mozilla/native-messaging-hosts/org.coffer.browser_host.json")
        let wrapper = try XCTUnwrap(manifest["path"] as? String)
        XCTAssertTrue(try String(contentsOfFile: wrapper, encoding: .utf8).contains("flatpak-spawn --host '\(host)'"))
        let chromium = cli.run(["browser", "install", "--browser", "chromium", "--host", host], container: false)
        XCTAssertTrue(chromium.stderr.contains("from Snap runs strictly confined"), chromium.stderr)
        XCTAssertTrue(cli.run(["browser", "status", "--browser", "chromium"], container: false).stdout.contains("Snap:"))
    }
}
