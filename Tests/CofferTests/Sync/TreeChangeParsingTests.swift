@testable import CofferStore
import XCTest

/// `git diff-tree -z --raw` output read as git writes it: in pieces of any size, split anywhere
/// (inside a header, a path or between the two), the entries are the ones the whole output holds.
final class TreeChangeParsingTests: XCTestCase {
    let output = Array((
        ":000000 100644 0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 A\0records/0a/0a6162636465666768696a6b6c6d6e6f\0"
        + ":100644 100644 2222222222222222222222222222222222222222 3333333333333333333333333333333333333333 M\0vault.coffer\0"
        + ":100644 000000 4444444444444444444444444444444444444444 0000000000000000000000000000000000000000 D\0tombstones/ff/ff000000000000000000000000000000\0"
    ).utf8)

    func testEntriesAreTheSameWhereverThePiecesEnd() throws {
        let whole = try TreeChange.parse(output)
        XCTAssertEqual(whole.map(\.path), ["records/0a/0a6162636465666768696a6b6c6d6e6f", "vault.coffer", "tombstones/ff/ff000000000000000000000000000000"])
        XCTAssertEqual(whole[0].oldObject, nil)
        XCTAssertEqual(whole[0].newObject, String(repeating: "1", count: 40))
        XCTAssertEqual(whole[2].newObject, nil)
        for size in 1...output.count {
            var parser = TreeChange.StreamParser()
            var changes: [TreeChange] = []
            var start = 0
            while start < output.count {
                try parser.feed(Array(output[start..<min(start + size, output.count)])) { changes.append($0) }
                start += size
            }
            try parser.finish()
            XCTAssertEqual(changes, whole, "pieces of \(size) bytes")
        }
    }

    func testOutputEndingInsideAnEntryIsRefused() throws {
        var parser = TreeChange.StreamParser()
        var changes: [TreeChange] = []
        try parser.feed(Array(output.dropLast(5))) { changes.append($0) }
        XCTAssertEqual(changes.count, 2)
        XCTAssertThrowsError(try parser.finish())
        XCTAssertThrowsError(try TreeChange.parse(Array(":100644 100644 a b\0".utf8)), "a header with four words")
    }
}
