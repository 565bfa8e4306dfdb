import Glibc

/// This program's own file, read from `/proc/self/exe`: where the executables installed beside
/// it and its shared data are found.
public enum OwnExecutable {
    /// The executable's absolute path, or `nil` when the link cannot be read or the file was
    /// replaced since it started (the kernel then appends " (deleted)").
    public static var path: String? {
        guard let path = KernelProcess.executable(of: "self") else { return nil }
        return path.hasSuffix(" (deleted)") ? nil : path
    }
}

/// What the kernel says of a process (`/proc`), never what the process says of itself: who a
/// D-Bus or socket peer is.
public enum KernelProcess {
    /// `/proc/PID/exe`: the program a process runs (`process` is a pid or `self`).
    public static func executable(of process: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/\(process)/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func executable(ofProcess pid: Int32) -> String? { executable(of: String(pid)) }

    /// When a process started, in clock ticks after boot: field 22 of `/proc/PID/stat`, counted
    /// after the parenthesised command name (which may hold spaces and parentheses of its own).
    /// A pid and its start time name one process, even after the pid is reused.
    public static func startTime(ofProcess pid: Int32) -> UInt64? {
        // Read as a stream: a /proc file states its size as 0.
        guard case .success(let fd) = SystemCall.retryingInterrupts({ open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC) }) else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard case .success(let count) = buffer.withUnsafeMutableBytes({ Descriptor.read(fd, into: $0) }), count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
