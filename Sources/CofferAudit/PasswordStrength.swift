import CofferProvider
import CZxcvbn

/// How hard a password is to guess, as zxcvbn estimates it (libzxcvbn, Dropbox's estimator in C):
/// dictionary words, names, keyboard walks, dates, repeats and l33t are priced as an attacker
/// would try them, not by character classes.
public struct PasswordStrength: Equatable, Sendable {
    /// log2 of the estimated guesses.
    public let bits: Double

    /// Below this a password is reported weak: about 10^12 guesses, an offline attack of a day
    /// on one GPU against a fast hash (KeePassXC calls under 40 bits "poor", 40–75 "weak").
    public static let weakBelow = 40.0

    public var isWeak: Bool { bits < Self.weakBelow }

    /// - Parameter context: words that make this password easy for someone who knows the item
    ///   (its user, site, name), matched as zxcvbn's user dictionary.
    public init(of password: String, context: [String] = []) {
        let words = context.filter { !$0.isEmpty }.map { word in
            let text = Array(word.utf8CString)
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: text.count)
            copy.initialize(from: text, count: text.count)
            return copy
        }
        defer { words.forEach { $0.deallocate() } }
        var dictionary: [UnsafePointer<CChar>?] = words.map { UnsafePointer($0) } + [nil]
        bits = password.withCString { text in
            dictionary.withUnsafeMutableBufferPointer { ZxcvbnMatch(text, $0.baseAddress, nil) }
        }
    }
}
