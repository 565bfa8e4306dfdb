import Glibc

/// This process: its id, and its end with a status (flushing C's buffered output, as `exit(3)`).
public enum CurrentProcess {
    public static var id: Int32 { getpid() }

    /// Moves the working directory (a daemon to `/`, so it keeps no file system busy).
    @discardableResult
    public static func changeDirectory(to path: String) -> Bool { chdir(path) == 0 }

    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }
}
