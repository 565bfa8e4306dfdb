import Coffer
@testable import CofferSystem
import XCTest

/// The pipes to a child (how Coffer runs git and pinentry).
final class ChildProcessTests: XCTestCase {
    /// A child that writes far more to stderr than a pipe holds before it finishes stdout must
    /// not stall: a remote that makes git complain at length cannot hang a sync.
    func testALongComplaintOnStandardErrorDoesNotStallTheChild() throws {
        let child = try ChildProcess(
            ["/bin/sh", "-c", "yes | head -c 300000 >&2; echo done; echo last words >&2"], environment: .process,
            captureStandardError: true)
        let (output, errors) = try child.readOutputAndErrors(limit: 1 << 20, errorLimit: 1000)
        XCTAssertEqual(child.wait(), 0)
        XCTAssertEqual(String(decoding: output, as: UTF8.self), "done\n")
        XCTAssertEqual(errors.count, 1000, "only the end of the complaint is kept")
        let text = String(decoding: errors, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("y\nlast words\n"), text)
        XCTAssertFalse(text.contains("Broken pipe"), "the child's SIGPIPE is at its default, not ignored as in Swift: `yes` ends quietly")
    }

    func testExactReadsOfAFramedAnswer() throws {
        let child = try ChildProcess(["/bin/sh", "-c", "printf 'head\\nbody12345tail'"], environment: .process)
        XCTAssertEqual(try child.readLine(limit: 100).map { String(decoding: $0, as: UTF8.self) }, "head")
        XCTAssertEqual(String(decoding: try child.readBytes(count: 9), as: UTF8.self), "body12345")
        XCTAssertEqual(String(decoding: try child.readBytes(count: 100), as: UTF8.self), "tail", "fewer when the child ends first")
        XCTAssertEqual(child.wait(), 0)
    }
}
