import Glibc

/// The names that another process wrote into a set of directories (inotify: a file closed after
/// writing, or renamed into one), so a long-lived process learns of a commit without polling,
/// and sleeps while nothing happens. Best effort: a directory that cannot be watched (gone, on
/// a file system without inotify, over the user's watch limit) is simply not reported on.
public final class DirectoryWatch {
    /// Readable when events wait: for `poll` beside other descriptors.
    public let fd: Int32

    public init?(_ directories: [String]) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        for directory in directories { _ = inotify_add_watch(fd, directory, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)) }
    }

    deinit { Descriptor.close(fd) }

    /// The names of every event waiting, read without blocking.
    public func drain() -> [String] {
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            // Each event: wd i32, mask u32, cookie u32, len u32, then `len` bytes of NUL-padded name.
            var offset = 0
            while offset + 16 <= count {
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
                offset += 16 + length
            }
        }
    }
}
