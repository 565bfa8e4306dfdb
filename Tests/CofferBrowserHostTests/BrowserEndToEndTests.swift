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

    /// Both browsers at once: each case waits on a browser far more than it computes, so the two
    /// runs share the machine's two cores and the suite saves the length of the shorter one.
    func testTheExtensionInRealChromiumAndFirefox() throws {
        let runs = try [("chromium", "/usr/bin/chromium", 32), ("firefox", "/usr/bin/firefox-esr", 25)].compactMap { browser, executable, cases in
            try start(browser: browser, executable: executable).map { (browser, cases, $0) }
        }
        for (browser, cases, run) in runs { check(browser: browser, cases: cases, run.process, output: run.output) }
    }

    struct Run {
        let process: Process
        let output: () -> String
    }

    /// Starts the cases in `browser`; `nil` (and a failure) when a tool is missing.
    private func start(browser: String, executable: String) throws -> Run? {
        for tool in [executable, "/usr/bin/openssl", "/usr/bin/python3"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                XCTFail("\(tool) is missing: scripts/test installs chromium, firefox-esr, openssl and python3-websocket")
                return nil
            }
        }
        let out = Self.root + "/.build/browser-e2e/" + browser
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["420", "/usr/bin/python3", Self.root + "/Tests/Browser/browser_e2e.py", "--bin", Self.products,
                             "--extension", Self.root + "/Browser/extension", "--out", out, "--browser", browser]
        let log = Self.root + "/.build/browser-e2e/\(browser).log"
        try? FileManager.default.createDirectory(atPath: Self.root + "/.build/browser-e2e", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return Run(process: process, output: { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" })
    }

    /// Each case is one `ok`/`FAIL` line, and at least `cases` must pass (a case that went
    /// missing fails too).
    private func check(browser: String, cases: Int, _ process: Process, output: () -> String) {
        process.waitUntilExit()
        let output = output()
        print(output)
        let out = Self.root + "/.build/browser-e2e/" + browser
        XCTAssertEqual(process.terminationStatus, 0, "\(browser) cases failed:\n\(output)")
        for line in output.split(separator: "\n") where line.hasPrefix("FAIL") { XCTFail("\(browser): \(line)") }
        XCTAssertGreaterThanOrEqual(output.split(separator: "\n").filter { $0.hasPrefix("ok") }.count, cases, "\(browser): cases went missing:\n\(output)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/suggestions.png"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/save-bar.png"))
        for view in ["list", "item", "edit", "conflict", "audit", "locked"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/vault-\(view).png"), "\(browser): no screenshot of the vault page's \(view)")
        }
    }
}
