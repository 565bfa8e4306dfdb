import Glibc

/// Environment variables, as a host passes them in (tests pass their own; the CLI passes the
/// process's).
///
/// A list, not a `[String: String]`: a command reads three or four variables once, and the first
/// `Dictionary` keyed by `String` in a process makes the Swift runtime scan every protocol
/// conformance in the binary; that was a tenth of `coffer --version`.
public struct Environment: Sendable, ExpressibleByDictionaryLiteral {
    public private(set) var variables: [(name: String, value: String)]

    public init(dictionaryLiteral elements: (String, String)...) {
        variables = []
        for (name, value) in elements { self[name] = value }
    }

    public init(_ dictionary: [String: String]) {
        variables = dictionary.map { (name: $0.key, value: $0.value) }
    }

    /// This process's environment (`environ`); an entry without `=` is skipped. A name listed
    /// twice answers with its first value, as `getenv` does.
    public static var process: Environment {
        var environment: Environment = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let pair = String(cString: entry)
            if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                environment.variables.append((String(pair[..<equals]), String(pair[pair.utf8.index(after: equals)...])))
            }
            pointer += 1
        }
        return environment
    }

    /// The value of `name` (compared byte for byte, as `getenv` does); setting `nil` removes it.
    public subscript(name: String) -> String? {
        get { variables.first { $0.name.hasSameUTF8(as: name) }?.value }
        set {
            let position = variables.firstIndex { $0.name.hasSameUTF8(as: name) }
            switch (newValue, position) {
            case (let value?, let position?): variables[position].value = value
            case (let value?, nil): variables.append((name, value))
            case (nil, let position?): variables.remove(at: position)
            case (nil, nil): break
            }
        }
    }
}
