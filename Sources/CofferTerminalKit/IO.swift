import CofferProvider
import CofferHostKit

/// Where the CLI reads and writes. Injected so tests run commands in-process and see exactly
/// what a user would (SwiftFormat's habit); `IO.process` is the real thing.
public final class IO: @unchecked Sendable {
    // @unchecked: one IO belongs to one command run on one thread.
    public let standardInput: LineReader
    public let standardOutput: (String) -> Void
    /// Standard output as bytes, for output written in pieces (a listing of 100,000 rows is
    /// streamed, never one string): by default each piece goes to `standardOutput` as text, so
    /// a piece MUST end on a character boundary.
    public let standardOutputBytes: (UnsafeBufferPointer<UInt8>) -> Void
    public let standardError: (String) -> Void
    /// The controlling terminal, or `nil` when there is none (cron, CI, a pipe from a script).
    public let terminal: Terminal?
    public let environment: Environment
    /// Whether stderr is a terminal: progress lines are drawn only there.
    public let standardErrorIsTerminal: Bool
    /// Whether stdout is a terminal: a QR code is drawn only there (never into a file or pipe).
    public let standardOutputIsTerminal: Bool

    public init(
        standardInput: LineReader, standardOutput: @escaping (String) -> Void,
        standardError: @escaping (String) -> Void, terminal: Terminal?, environment: Environment,
        standardErrorIsTerminal: Bool = false, standardOutputIsTerminal: Bool = false,
        standardOutputBytes: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil
    ) {
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardOutputBytes = standardOutputBytes ?? { standardOutput(String(decoding: $0, as: UTF8.self)) }
        self.standardError = standardError
        self.terminal = terminal
        self.environment = environment
        self.standardErrorIsTerminal = standardErrorIsTerminal
        self.standardOutputIsTerminal = standardOutputIsTerminal
    }

    /// Standard streams of this process and `/dev/tty` if it can be opened.
    public static func process() -> IO {
        IO(
            standardInput: FileDescriptorLineReader(fd: 0),
            standardOutput: { text in writeAll(1, text) },
            standardError: { text in writeAll(2, text) },
            terminal: DeviceTerminal.open(),
            environment: .process,
            standardErrorIsTerminal: TerminalDevice.isTerminal(2), standardOutputIsTerminal: TerminalDevice.isTerminal(1),
            standardOutputBytes: { bytes in writeAll(1, bytes) })
    }

    package static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { writeAll(fd, $0) }  // in place: a long output is not copied again
    }

    /// Output that cannot be written (a closed pipe) is dropped: the command's exit status says the rest.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        Descriptor.writeAll(fd, UnsafeRawBufferPointer(bytes))
    }
}

/// A source of lines (standard input, a password file). Lines are returned without the
/// newline (and without a `\r` before it).
public protocol LineReader: AnyObject {
    /// The next line as bytes, or `nil` at end of input.
    func readLineBytes() -> [UInt8]?
    /// Everything left, byte for byte (a template), at most `limit` bytes.
    func readRemainingBytes(limit: Int) -> [UInt8]
}

extension LineReader {
    /// The next line in guarded memory; the temporary copy is wiped.
    package func readSecretLine() throws -> SecureBytes? {
        guard var bytes = readLineBytes() else { return nil }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return try SecureBytes(copying: bytes)
    }

    package func readTextLine() -> String? {
        readLineBytes().map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Reads lines from a file descriptor one byte at a time, so nothing past the line is consumed.
public final class FileDescriptorLineReader: LineReader {
    package let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func readLineBytes() -> [UInt8]? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            guard case .success(1) = withUnsafeMutableBytes(of: &byte, { Descriptor.read(fd, into: $0) }) else {
                return line.isEmpty ? nil : line
            }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    public func readRemainingBytes(limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            guard case .success(let count) = chunk.withUnsafeMutableBytes({ Descriptor.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted])) }),
                  count > 0
            else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}

/// Lines from bytes in memory: for tests and for `--password-file`.
public final class BufferLineReader: LineReader {
    private var lines: [[UInt8]]
    /// Whether the input ended with a line break (for `readRemainingBytes`).
    private let endsWithNewline: Bool

    public convenience init(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    public init(bytes: [UInt8]) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        if bytes.last == UInt8(ascii: "\n") || bytes.isEmpty { lines.removeLast() }
        self.lines = lines.map { $0.last == UInt8(ascii: "\r") ? Array($0.dropLast()) : $0 }
        endsWithNewline = bytes.last == UInt8(ascii: "\n")
    }

    public func readRemainingBytes(limit: Int) -> [UInt8] {
        var bytes = Array(lines.map { $0 + [UInt8(ascii: "\n")] }.joined())
        if !endsWithNewline, !bytes.isEmpty { bytes.removeLast() }
        lines = []
        return Array(bytes.prefix(limit))
    }

    public func readLineBytes() -> [UInt8]? {
        lines.isEmpty ? nil : lines.removeFirst()
    }
}
