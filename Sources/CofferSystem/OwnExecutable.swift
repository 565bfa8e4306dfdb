import Glibc

/// This program's own file, read from `/proc/self/exe`: where the executables installed beside
/// it and its shared data are found.
public enum OwnExecutable {
    /// The executable's absolute path, or `nil` when the link cannot be read or the file was
    /// replaced since it started (the kernel then appends " (deleted)").
    public static var path: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.hasSuffix(" (deleted)") ? nil : path
    }
}
