import CofferModel
import CofferSupport
/// The SSH wire encoding (RFC 4251 §5) that agent messages, public key blobs and OpenSSH key
/// files share: `uint32` big-endian, `string` as a `uint32` length and its bytes. A format of its
/// own, below both agents: the SSH agent speaks it, and the fill agent's messages are framed in it
/// (SPEC.md §8.5) without borrowing from the SSH key code.
public struct SSHWireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    public mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    public mutating func string<Bytes: Collection>(_ value: Bytes) where Bytes.Element == UInt8 {
        uint32(UInt32(value.count))
        bytes += value
    }

    public mutating func string(_ value: String) { string(Array(value.utf8)) }

    /// Wipes what was written (a buffer that held a private key).
    public mutating func wipe() {
        for index in bytes.indices { bytes[index] = 0 }
        bytes = []
    }
}

/// Reads the SSH wire encoding from a buffer it does not own; every read is bounds-checked and
/// a short buffer is `SSHWireError.truncated`, never a crash.
public struct SSHWireReader {
    private let buffer: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    public var isAtEnd: Bool { offset == buffer.count }
    public var remaining: Int { buffer.count - offset }

    public mutating func byte() throws(SSHWireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return buffer[offset]
    }

    public mutating func uint32() throws(SSHWireError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated }
        defer { offset += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(buffer[offset + $1]) }
    }

    /// A `string`'s bytes as a view into the buffer (valid as long as the buffer is).
    public mutating func stringBytes() throws(SSHWireError) -> UnsafeRawBufferPointer {
        let length = Int(try uint32())
        guard remaining >= length else { throw .truncated }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length])
    }

    public mutating func string() throws(SSHWireError) -> [UInt8] { Array(try stringBytes()) }

    public mutating func text() throws(SSHWireError) -> String {
        let bytes = try stringBytes()
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("a string is not UTF-8") }
        return text
    }
}

public enum SSHWireError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated: "the message ends early"
        case .malformed(let reason): reason
        }
    }
}
