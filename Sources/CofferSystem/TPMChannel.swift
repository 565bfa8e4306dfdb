import Glibc

/// A TPM 2.0 command channel (SPEC.md §8.6.1): commands in, responses out, as the TPM marshals
/// them. The kernel's resource manager `/dev/tpmrm0` by default (it flushes what a closed channel
/// left loaded), or a TCTI named as tpm2-tss names them — `device:PATH`, or
/// `swtpm:host=127.0.0.1,port=N` for a software TPM's command port (the tests' `swtpm`).
///
/// Coffer speaks to the TPM directly instead of through tpm2-tss: Debian ships no static tss2,
/// and the handful of commands quick unlock needs are simpler to marshal than to `dlopen`.
public final class TPMChannel {
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// No TPM here (no device, nothing listening), or a TCTI this channel does not speak.
        case unavailable(String)
        /// The TPM went away or answered with something that is not a response.
        case broken(String)

        public var description: String {
            switch self {
            case .unavailable(let why): "no TPM 2.0 to use: \(why)"
            case .broken(let why): "the TPM did not answer: \(why)"
            }
        }
    }

    /// The TCTI used when none is named: the kernel's resource manager.
    public static let defaultDevice = "/dev/tpmrm0"
    /// Longer than any command quick unlock sends takes on a real TPM (an ECC primary key: ~0.1 s).
    static let timeout: Duration = .seconds(60)
    private let fd: Int32
    private let isDevice: Bool

    /// Opens the channel `tcti` names (`nil`: `/dev/tpmrm0`).
    public init(tcti: String?) throws(Failure) {
        let spec = tcti.flatMap { $0.isEmpty ? nil : $0 } ?? "device:" + Self.defaultDevice
        let kind = spec.prefix(while: { $0 != ":" })
        let options = spec.dropFirst(kind.count + 1)
        switch kind {
        case "device":
            let path = options.isEmpty ? Self.defaultDevice : String(options)
            let fd = SystemCall.retryingInterrupts { open(path, O_RDWR | O_CLOEXEC) }
            guard case .success(let opened) = fd else {
                if case .failure(let error) = fd { throw .unavailable("\(path): \(error)") }
                throw .unavailable(path)
            }
            self.fd = opened
            isDevice = true
        case "swtpm":
            var host = "127.0.0.1", port = 2321
            for option in options.split(separator: ",") {
                let pair = option.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { throw .unavailable("the TCTI option '\(option)' is not name=value") }
                switch pair[0] {
                case "host": host = pair[1] == "localhost" ? "127.0.0.1" : pair[1]
                case "port":
                    guard let number = Int(pair[1]), (1...65535).contains(number) else { throw .unavailable("bad port '\(pair[1])'") }
                    port = number
                default: throw .unavailable("unknown swtpm TCTI option '\(pair[0])'")
                }
            }
            fd = try Self.connect(host: host, port: port)
            isDevice = false
        default:
            throw .unavailable("the TCTI '\(kind)' is not one Coffer speaks (device, swtpm)")
        }
    }

    deinit { Descriptor.close(fd) }

    /// Sends one command and returns its whole response (header included).
    public func transmit(_ command: [UInt8]) throws(Failure) -> [UInt8] {
        if let error = Descriptor.writeAll(fd, command, noSignal: !isDevice) { throw .broken("\(error)") }
        let deadline = ContinuousClock.now + Self.timeout
        if isDevice {
            // The kernel hands a whole response to one read.
            var buffer = [UInt8](repeating: 0, count: 4096)
            let read = buffer.withUnsafeMutableBytes { Descriptor.read(fd, into: $0) }
            guard case .success(let count) = read, count >= 10 else { throw .broken("a short response") }
            return Array(buffer[..<count])
        }
        var header = [UInt8](repeating: 0, count: 10)
        guard header.withUnsafeMutableBytes({ Descriptor.readExactly(fd, into: $0, before: deadline) }) == .complete else {
            throw .broken("no response header")
        }
        let size = Int(header[2]) << 24 | Int(header[3]) << 16 | Int(header[4]) << 8 | Int(header[5])
        guard (10...65536).contains(size) else { throw .broken("a response of \(size) bytes") }
        var rest = [UInt8](repeating: 0, count: size - 10)
        guard rest.withUnsafeMutableBytes({ Descriptor.readExactly(fd, into: $0, before: deadline) }) == .complete else {
            throw .broken("a response cut short")
        }
        return header + rest
    }

    /// A TCP connection to an IPv4 address (a software TPM on loopback).
    private static func connect(host: String, port: Int) throws(Failure) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw .unavailable("'\(host)' is not an IPv4 address") }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unavailable("no socket: \(Errno.current)") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            let error = Errno.current
            Descriptor.close(fd)
            throw .unavailable("\(host):\(port): \(error)")
        }
        return fd
    }
}
