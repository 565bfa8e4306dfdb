import Foundation

/// A software TPM 2.0 (Debian's `swtpm`) of one test's own: a fresh state directory (so a new
/// owner seed: another machine's TPM), listening on loopback, stopped when released. Its
/// dictionary-attack settings are swtpm's: 3 tries, then locked out for 1000 s.
public final class SoftwareTPM {
    /// The TCTI that names it, as tpm2-tss spells it (`COFFER_TPM_TCTI`, `TPM2TOOLS_TCTI`).
    public let tcti: String
    private let process: Process

    /// Starts one; `nil` when swtpm is not installed (scripts/test installs it).
    public init?() throws {
        guard let swtpm = ["/usr/bin/swtpm", "/usr/local/bin/swtpm"].first(where: FileManager.default.isExecutableFile(atPath:)) else { return nil }
        let state = ScratchDirectories.make(prefix: "coffer-swtpm")
        for _ in 0..<8 {
            // A command port and the control port after it, for tpm2-tools (Coffer needs none).
            let port = Int.random(in: 20000...60000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: swtpm)
            process.arguments = [
                "socket", "--tpm2", "--tpmstate", "dir=\(state)", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilListening(port: port, while: process) {
                self.process = process
                tcti = "swtpm:host=127.0.0.1,port=\(port)"
                return
            }
            process.terminate()
            process.waitUntilExit()
        }
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "swtpm did not start on a free port"])
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }

    /// Runs a tpm2-tools program against this TPM (e.g. `tpm2_dictionarylockout`); its exit status.
    @discardableResult
    public func tool(_ name: String, _ arguments: [String]) throws -> Int32 {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/" + name)
        tool.arguments = arguments
        tool.environment = ["TPM2TOOLS_TCTI": tcti, "PATH": "/usr/bin:/bin"]
        tool.standardOutput = FileHandle.nullDevice
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        tool.waitUntilExit()
        return tool.terminationStatus
    }

    /// Whether something accepts connections on `port` within 5 s, while `process` runs.
    private static func waitUntilListening(port: Int, while process: Process) -> Bool {
        for _ in 0..<100 {
            guard process.isRunning else { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            usleep(50_000)
        }
        return false
    }
}
