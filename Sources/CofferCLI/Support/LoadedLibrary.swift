import Glibc

/// A shared C library opened when a command first needs it (`dlopen`), for libraries Debian
/// ships without a static archive (libqrencode, libzip). `coffer` is one static executable, which
/// is what makes `coffer fill` start in 3 ms (README "Performance"); linking these would need the
/// dynamic loader on every run for a feature few runs use. Their `.systemLibrary` targets supply
/// the types; the functions are looked up here by name.
final class LoadedLibrary: @unchecked Sendable {
    // @unchecked: the handle is only read after init; dlsym is thread-safe.
    private let handle: UnsafeMutableRawPointer
    let soname: String

    /// - Parameter package: the Debian package that provides `soname`, for the error message.
    init(_ soname: String, package: String, purpose: String) throws {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            throw CLIError("\(purpose) needs \(soname), which is not installed", hint: "apt install \(package)")
        }
        self.handle = handle
        self.soname = soname
    }

    /// The function `name`, as the C type `T` (a `@convention(c)` function type).
    func function<T>(_ name: String, as type: T.Type) throws -> T {
        guard let symbol = dlsym(handle, name) else { throw CLIError("\(soname) has no \(name): an incompatible version") }
        return unsafeBitCast(symbol, to: type)
    }
}
