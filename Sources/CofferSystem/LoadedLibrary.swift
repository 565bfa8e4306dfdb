import Glibc

/// A shared C library opened when a feature first needs it (`dlopen`): libqrencode (QR codes),
/// libzip (1Password's 1PUX) and libxml2 (KeePass XML). `coffer` is one static executable, which is
/// what makes `coffer fill` start in 3 ms (docs/performance.md); Debian ships libqrencode and
/// libzip without a static archive, and libxml2's would bring ICU's 30 MB of data into every
/// run. Their `.systemLibrary` targets supply only the types; the functions are looked up here.
public final class LoadedLibrary: @unchecked Sendable {
    // @unchecked: the handle is only read after init; dlsym is thread-safe.
    private let handle: UnsafeMutableRawPointer
    public let soname: String

    public enum LoadError: Error, Equatable, Sendable, CustomStringConvertible {
        case missing(soname: String, package: String, purpose: String)
        case incompatible(soname: String, symbol: String)

        public var description: String {
            switch self {
            case .missing(let soname, let package, let purpose): "\(purpose) needs \(soname), which is not installed (apt install \(package))"
            case .incompatible(let soname, let symbol): "\(soname) has no \(symbol): an incompatible version"
            }
        }
    }

    /// - Parameters:
    ///   - package: the Debian package that provides `soname`, for the error message.
    ///   - purpose: what needs it ("drawing a QR code"), for the error message.
    public init(_ soname: String, package: String, purpose: String) throws(LoadError) {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else { throw .missing(soname: soname, package: package, purpose: purpose) }
        self.handle = handle
        self.soname = soname
    }

    /// The symbol `name` (a function, as the `@convention(c)` type `T`).
    public func function<T>(_ name: String, as type: T.Type) throws(LoadError) -> T {
        guard let symbol = dlsym(handle, name) else { throw .incompatible(soname: soname, symbol: name) }
        return unsafeBitCast(symbol, to: type)
    }

    /// The address of the variable `name` (libxml2's `xmlFree` is a variable holding a function).
    public func variable(_ name: String) throws(LoadError) -> UnsafeMutableRawPointer {
        guard let symbol = dlsym(handle, name) else { throw .incompatible(soname: soname, symbol: name) }
        return symbol
    }
}
