import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// Every child Coffer starts goes through one builder (`Spawn`) and so starts alike: no signal
/// blocked, none ignored — whatever Swift's runtime ignores (SIGPIPE) or Coffer holds back
/// (issue 29, item 4).
final class SpawnTests: XCTestCase {
    static let probe = "grep -E '^Sig(Ign|Blk):' /proc/self/status"

    /// The standard signals (1–31) blocked and ignored are none; glibc's own real-time signals
    /// (32, 33) are its business.
    func assertClean(_ text: String, _ who: String, file: StaticString = #filePath, line: UInt = #line) {
        let masks = text.split(separator: "\n").compactMap { line in line.split(separator: "\t").last.flatMap { UInt64($0, radix: 16) } }
        XCTAssertEqual(masks.count, 2, "\(who): \(text)", file: file, line: line)
        XCTAssertEqual(masks.map { $0 & 0x7FFF_FFFF }, [0, 0], "\(who): \(text)", file: file, line: line)
    }

    func testEveryKindOfChildStartsWithDefaultSignals() throws {
        let directory = ScratchDirectories.make(prefix: "coffer-spawn")
        let environment: Environment = ["PATH": "/usr/bin:/bin"]
        // ChildProcess (pinentry, git, ssh-keygen)
        let child = try ChildProcess(["/bin/sh", "-c", Self.probe], environment: environment)
        child.closeInput()
        assertClean(String(decoding: try child.readToEnd(limit: 1 << 16), as: UTF8.self), "ChildProcess")
        child.wait()
        // CommandChild (coffer run)
        let command = try CommandChild(["/bin/sh", "-c", Self.probe], environment: ["PATH=/usr/bin:/bin"], captureOutput: true)
        var output = [UInt8](repeating: 0, count: 4096)
        let count = read(command.standardOutput, &output, output.count)
        assertClean(String(decoding: output.prefix(max(0, count)), as: UTF8.self), "CommandChild")
        _ = command.exitStatus(wait: true)
        // The clipboard tools
        let clipped = directory + "/clip"
        XCTAssertEqual(try Clipboard.spawn(["/bin/sh", "-c", Self.probe + " > '\(clipped)'"], environment: environment, input: []), 0)
        assertClean(try String(contentsOfFile: clipped, encoding: .utf8), "Clipboard")
        // The editor
        let editor = directory + "/editor.sh"
        try "#!/bin/sh\n\(Self.probe) > \"$1\"\n".write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)
        let edited = try EditorSession(environment: ["PATH": "/usr/bin:/bin", "EDITOR": editor]).edit("text")
        assertClean(edited ?? "", "EditorSession")
    }
}
