import Foundation
import XCTest

/// Coffer in real browsers (SPEC.md §13): `Tests/Browser/browser_e2e.py` drives Debian's headless
/// Chromium through the DevTools protocol and headless Firefox ESR through WebDriver BiDi, against
/// a local HTTPS and HTTP test site, with the extension in `Browser/extension`, the real
/// `coffer-browser-host` and a scripted pinentry. The cases are written once for both browsers;
/// `scripts/test` installs chromium, firefox-esr and python3-websocket. Screenshots and timings
/// land in `.build/browser-e2e/<browser>/`.
final class BrowserEndToEndTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    func testTheExtensionInRealChromium() throws {
        try run(browser: "chromium", executable: "/usr/bin/chromium", cases: 26)
    }

    func testTheExtensionInRealFirefox() throws {
        try run(browser: "firefox", executable: "/usr/bin/firefox-esr", cases: 20)
    }

    /// Runs the cases in `browser`; each case is one `ok`/`FAIL` line, and at least `cases`
    /// must pass (a case that went missing fails too).
    private func run(browser: String, executable: String, cases: Int) throws {
        for tool in [executable, "/usr/bin/openssl", "/usr/bin/python3"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                return XCTFail("\(tool) is missing: scripts/test installs chromium, firefox-esr, openssl and python3-websocket")
            }
        }
        let out = Self.root + "/.build/browser-e2e/" + browser
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["300", "/usr/bin/python3", Self.root + "/Tests/Browser/browser_e2e.py", "--bin", Self.products,
                             "--extension", Self.root + "/Browser/extension", "--out", out, "--browser", browser]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(output)
        XCTAssertEqual(process.terminationStatus, 0, "\(browser) cases failed:\n\(output)")
        for line in output.split(separator: "\n") where line.hasPrefix("FAIL") { XCTFail("\(browser): \(line)") }
        XCTAssertGreaterThanOrEqual(output.split(separator: "\n").filter { $0.hasPrefix("ok") }.count, cases, "cases went missing:\n\(output)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/suggestions.png"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/save-bar.png"))
    }
}
