import Glibc

/// Environment variables, as a host passes them in (tests pass their own; the CLI passes the
/// process's).
///
/// A list, not a `[String: String]`: a command reads three or four variables once, and the first
/// `Dictionary` keyed by `String` in a process makes the Swift runtime scan every protocol
/// conformance in the binary; that was a tenth of `coffer --version`.
public struct Environment: Sendable, ExpressibleByDictionaryLiteral {
    /// Where the variables are: this process's `environ`, read a name at a time through `getenv`
    /// until something is set (copying all of `environ` into strings was an eighth of a fill);
    /// or a list of one's own.
    private enum Storage {
        case process
        case list([(name: String, value: String)])
    }

    private var storage: Storage

    public init(dictionaryLiteral elements: (String, String)...) {
        storage = .list([])
        for (name, value) in elements { self[name] = value }
    }

    public init(_ dictionary: [String: String]) {
        storage = .list(dictionary.map { (name: $0.key, value: $0.value) })
    }

    /// This process's environment (`environ`): an entry without `=` is skipped, and a name
    /// listed twice answers with its first value, as `getenv` does. Nothing in Coffer calls
    /// `setenv`, so reading late reads what was there at start.
    public static var process: Environment { Environment(storage: .process) }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Every variable, in order: for a child's environment and the `GIT_*` scrub.
    public var variables: [(name: String, value: String)] {
        switch storage {
        case .list(let variables): return variables
        case .process:
            var variables: [(name: String, value: String)] = []
            var pointer = environ
            while let entry = pointer.pointee {
                let pair = String(cString: entry)
                if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                    variables.append((String(pair[..<equals]), String(pair[pair.utf8.index(after: equals)...])))
                }
                pointer += 1
            }
            return variables
        }
    }

    /// The value of `name` (compared byte for byte, as `getenv` does); setting `nil` removes it.
    /// The program `name` as `execvp` would find it: `name` itself when it names a path, else
    /// the first executable `name` in `$PATH`'s directories (`/usr/bin:/bin` when unset); `nil`
    /// when there is none.
    public func programPath(_ name: String) -> String? {
        if name.contains("/") { return FileSystem.isExecutable(name) ? name : nil }
        for directory in (self["PATH"] ?? "/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let candidate = directory + "/" + name
            if FileSystem.isExecutable(candidate) { return candidate }
        }
        return nil
    }

    public subscript(name: String) -> String? {
        get {
            switch storage {
            case .list(let variables): return variables.first { $0.name.hasSameUTF8(as: name) }?.value
            case .process:
                // A name `getenv` would misread (one holding '=' or NUL) names no variable.
                guard !name.isEmpty, !name.utf8.contains(where: { $0 == UInt8(ascii: "=") || $0 == 0 }) else { return nil }
                return getenv(name).map { String(cString: $0) }
            }
        }
        set {
            var variables = self.variables
            let position = variables.firstIndex { $0.name.hasSameUTF8(as: name) }
            switch (newValue, position) {
            case (let value?, let position?): variables[position].value = value
            case (let value?, nil): variables.append((name, value))
            case (nil, let position?): variables.remove(at: position)
            case (nil, nil): break
            }
            storage = .list(variables)
        }
    }
}
