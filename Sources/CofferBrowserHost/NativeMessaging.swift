import CofferCore
import CofferHostKit
import Glibc

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
            var offset = 0
            while offset < buffer.count {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    if offset == 0 && buffer.count > 0 { return false }
                    throw .truncated
                }
                offset += count
            }
            return true
        }

        private func skip(_ length: Int) throws(BrowserHostError) {
            var left = length
            var chunk = [UInt8](repeating: 0, count: 65536)
            while left > 0 {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, min($0.count, left)) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw .truncated }
                left -= count
            }
        }
    }

    /// Writes one frame to `fd` (the browser's pipe on stdout).
    public static func write(_ frame: [UInt8], to fd: Int32) throws(BrowserHostError) {
        var offset = 0
        while offset < frame.count {
            let count = frame.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .truncated }
            offset += count
        }
    }
}
