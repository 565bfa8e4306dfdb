import Foundation
import XCTest

/// Coffer in real Chromium (SPEC.md §14): `Tests/Browser/browser_e2e.py` drives Debian's
/// headless Chromium through the DevTools protocol against a local HTTPS and HTTP test site,
/// with the extension in `Browser/extension`, the real `coffer-browser-host` and a scripted
/// pinentry. `scripts/test` installs chromium and python3-websocket. Screenshots of the list and
/// the save bar, and the timings, land in `.build/browser-e2e/`.
final class BrowserEndToEndTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    func testTheExtensionInRealChromium() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/openssl", "/usr/bin/python3"] {
            guard FileManager.default.isExecutableFile(atPath: tool) else {
                return XCTFail("\(tool) is missing: scripts/test installs chromium, openssl and python3-websocket")
            }
        }
        let out = Self.root + "/.build/browser-e2e"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["300", "/usr/bin/python3", Self.root + "/Tests/Browser/browser_e2e.py", "--bin", Self.products,
                             "--extension", Self.root + "/Browser/extension", "--out", out]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(output)
        XCTAssertEqual(process.terminationStatus, 0, "browser cases failed:\n\(output)")
        for line in output.split(separator: "\n") where line.hasPrefix("FAIL") { XCTFail(String(line)) }
        XCTAssertGreaterThanOrEqual(output.split(separator: "\n").filter { $0.hasPrefix("ok") }.count, 15, "cases went missing:\n\(output)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/suggestions.png"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/save-bar.png"))
    }
}
