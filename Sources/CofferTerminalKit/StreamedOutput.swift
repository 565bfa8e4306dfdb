/// Output written in pieces of about 256 KiB, each ending where a row ends: a listing of
/// 100,000 rows is streamed in bounded memory instead of being built as one string (a listing
/// of that size as `--json` peaked at 161 MiB).
package struct StreamedOutput {
    private static let pieceLength = 256 * 1024
    private let io: IO?
    /// The piece being written; append to it, then call `endRow()`.
    package var bytes: [UInt8] = []

    package init(_ io: IO) {
        self.io = io
        bytes.reserveCapacity(Self.pieceLength + 4096)
    }

    /// Output kept whole in `bytes`, never written (completion builds its table from it).
    package init() { io = nil }

    /// A row is complete: write the piece out once it is long enough.
    package mutating func endRow() {
        if bytes.count >= Self.pieceLength { flush() }
    }

    package mutating func flush() {
        guard let io, !bytes.isEmpty else { return }
        bytes.withUnsafeBufferPointer(io.standardOutputBytes)
        bytes.removeAll(keepingCapacity: true)
    }

    package mutating func append(_ text: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: text) }

    package mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func appendSpaces(_ count: Int) {
        var left = count
        while left > 0 {
            let run = min(left, Self.spaces.utf8CodeUnitCount)
            bytes.append(contentsOf: UnsafeBufferPointer(start: Self.spaces.utf8Start, count: run))
            left -= run
        }
    }

    private static let spaces: StaticString = "                                                "
}
