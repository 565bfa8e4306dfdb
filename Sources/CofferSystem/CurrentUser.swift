import Glibc

/// The user this process acts for (its effective user): the owner every private file and
/// directory of Coffer's must have.
public enum CurrentUser {
    public static var id: UInt32 { geteuid() }
    public static var groupID: UInt32 { getegid() }

    /// The home directory from the user database (`getpwuid`), for when `HOME` is unset.
    public static var homeDirectory: String? {
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
