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
            if Self.waitUntilListening(ports: [port, port + 1], while: process) {
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

    /// Whether `process` itself listens on every one of `ports` within 5 s. Asking whether
    /// *something* accepts a connection is not enough: a port another program already holds
    /// (a random port, tests in two lanes) accepts too, and swtpm, failing to bind it, has not
    /// exited yet; the test then spoke to a server that never answers (60 s, "no response header").
    private static func waitUntilListening(ports: [Int], while process: Process) -> Bool {
        for _ in 0..<100 {
            guard process.isRunning else { return false }
            let owned = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd")) ?? []).compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.processIdentifier)/fd/\($0)")
            })
            // /proc/net/tcp: "sl local_address rem_address st … inode": loopback, listening (0A).
            let listening = ((try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> (Int, String)? in
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == "0A", fields[1].hasPrefix("0100007F:"), let port = Int(fields[1].dropFirst(9), radix: 16) else { return nil }
                return (port, "socket:[\(fields[9])]")
            }
            if ports.allSatisfy({ port in listening.contains { $0.0 == port && owned.contains($0.1) } }) { return true }
            usleep(50_000)
        }
        return false
    }
}
