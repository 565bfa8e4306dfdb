import CofferProvider
import CofferHostKit

/// The browsers' native-messaging framing (Chromium and Firefox alike): each message is a u32
/// length in native byte order (little endian on every Linux Coffer runs on) followed by that
/// many bytes of UTF-8 JSON. Coffer accepts and sends at most 1 MiB per message (Chromium's
/// limit for a host's replies; SPEC.md §19).
public enum NativeMessaging {
    public static let maximumLength = 1 << 20

    /// The frame of one reply.
    /// - Throws: `BrowserHostError.tooLarge` when the JSON is over the limit.
    public static func frame(_ message: JSONValue) throws(BrowserHostError) -> [UInt8] {
        let body = message.canonicalBytes
        guard body.count <= maximumLength else { throw .tooLarge(body.count) }
        return withUnsafeBytes(of: UInt32(body.count).littleEndian, Array.init) + body
    }

    /// Reads frames from a file descriptor (the browser's pipe on stdin).
    public struct Reader {
        let fd: Int32

        public init(fd: Int32) { self.fd = fd }

        public enum Frame {
            /// One message's bytes.
            case message([UInt8])
            /// A message over the limit, already read past so the stream stays in step.
            case tooLarge(Int)
            /// The browser closed the connection.
            case end
        }

        public func next() throws(BrowserHostError) -> Frame {
            var header = [UInt8](repeating: 0, count: 4)
            guard try readExactly(&header) else { return .end }
            let length = Int(UInt32(littleEndian: header.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            guard length <= maximumLength else {
                try skip(length)
                return .tooLarge(length)
            }
            var body = [UInt8](repeating: 0, count: length)
            guard try readExactly(&body) else { throw .truncated }
            return .message(body)
        }

        /// Fills `buffer`; `false` at a clean end of input before the first byte.
        private func readExactly(_ buffer: inout [UInt8]) throws(BrowserHostError) -> Bool {
            switch buffer.withUnsafeMutableBytes({ Descriptor.readExactly(fd, into: $0) }) {
            case .complete: return true
            case .endOfInput: return false
            case .truncated, .timedOut, .failed: throw .truncated
            }
        }

        private func skip(_ length: Int) throws(BrowserHostError) {
            var left = length
            var chunk = [UInt8](repeating: 0, count: 65536)
            while left > 0 {
                let wanted = min(chunk.count, left)
                guard case .success(let count) = chunk.withUnsafeMutableBytes({ Descriptor.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted])) }),
                      count > 0
                else { throw .truncated }
                left -= count
            }
        }
    }

    /// Writes one frame to `fd` (the browser's pipe on stdout).
    public static func write(_ frame: [UInt8], to fd: Int32) throws(BrowserHostError) {
        guard Descriptor.writeAll(fd, frame) == nil else { throw .truncated }
    }
}
