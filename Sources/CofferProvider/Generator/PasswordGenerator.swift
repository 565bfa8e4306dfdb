import CofferStore
import CofferFormat
import FoundationEssentials
// libm, the one part of the C library the generator uses (entropy is a base-2 logarithm).
import func Glibc.log2
import func Glibc.pow

/// Random passwords from libsodium's CSPRNG, with their entropy, in the styles users know.
public enum PasswordGenerator {
    public enum Style: String, CaseIterable, Sendable {
        /// `length` characters drawn from the chosen classes, at least one of each.
        case chars
        /// Apple's strong password: `xxxxxx-xxxxxx-xxxxxx`, lowercase, one uppercase and one digit.
        case apple
        /// Words drawn uniformly from a word list, joined by `-`.
        case words
    }

    public struct CharacterClasses: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let lowercase = CharacterClasses(rawValue: 1)
        public static let uppercase = CharacterClasses(rawValue: 2)
        public static let digits = CharacterClasses(rawValue: 4)
        public static let symbols = CharacterClasses(rawValue: 8)
        public static let all: CharacterClasses = [.lowercase, .uppercase, .digits, .symbols]
    }

    public struct Generated: Sendable {
        public let password: String
        /// log2 of the number of equally likely outputs (a lower bound for `chars`).
        public let entropyBits: Double
    }

    static let alphabets: [(CharacterClasses, [Character])] = [
        (.lowercase, Array("abcdefghijklmnopqrstuvwxyz")),
        (.uppercase, Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
        (.digits, Array("0123456789")),
        (.symbols, Array("!#$%&()*+,-./:;<=>?@[]^_{|}~")),
    ]

    /// `length` characters from `classes`, containing at least one of each class.
    public static func characters(length: Int = 20, classes: CharacterClasses = .all) throws -> Generated {
        let chosen = alphabets.filter { classes.contains($0.0) }.map(\.1)
        guard !chosen.isEmpty else { throw GeneratorError.noCharacterClass }
        guard length >= chosen.count, length <= 4096 else {
            throw GeneratorError.lengthOutOfRange(chosen.count...4096)
        }
        let pool = chosen.flatMap { $0 }
        while true {  // rejection sampling keeps every accepted password equally likely
            var password: [Character] = []
            for _ in 0..<length { password.append(pool[Int(try SecureRandom.uniform(UInt32(pool.count)))]) }
            if chosen.allSatisfy({ alphabet in password.contains(where: alphabet.contains) }) {
                // The class constraint removes a small fraction of outputs; the bound below
                // is the unconstrained entropy minus that fraction's log, rounded down.
                let bits = Double(length) * log2(Double(pool.count)) + log2(acceptanceProbability(length, chosen.map(\.count)))
                return Generated(password: String(password), entropyBits: (bits * 10).rounded(.down) / 10)
            }
        }
    }

    /// Apple's format: three groups of six lowercase letters and digits separated by `-`, with
    /// exactly one uppercase letter and one digit, as Safari's generator produces.
    public static func apple() throws -> Generated {
        let lowercase = Array("abcdefghijkmnopqrstuvwxyz")  // no 'l', easily misread
        var characters: [Character] = []
        for _ in 0..<18 { characters.append(lowercase[Int(try SecureRandom.uniform(UInt32(lowercase.count)))]) }
        let digitPosition = Int(try SecureRandom.uniform(18))
        var upperPosition = Int(try SecureRandom.uniform(17))
        if upperPosition >= digitPosition { upperPosition += 1 }
        characters[digitPosition] = Character(String(try SecureRandom.uniform(10)))
        characters[upperPosition] = Character(characters[upperPosition].uppercased())
        let groups = stride(from: 0, to: 18, by: 6).map { String(characters[$0..<$0 + 6]) }
        let bits = 16 * log2(Double(lowercase.count)) + log2(10) + log2(18) + log2(17)
        return Generated(password: groups.joined(separator: "-"), entropyBits: (bits * 10).rounded(.down) / 10)
    }

    /// `count` words drawn uniformly from `wordList` (duplicates removed first), joined by `-`.
    /// - Throws: `GeneratorError.wordListTooSmall` for fewer than 1,000 distinct words, which would make
    ///   each word worth under 10 bits.
    public static func passphrase(words count: Int = 6, from wordList: [String]) throws -> Generated {
        let words = Array(Set(wordList)).sorted()
        guard words.count >= 1000 else { throw GeneratorError.wordListTooSmall(words.count) }
        guard (3...40).contains(count) else { throw GeneratorError.wordCountOutOfRange(3...40) }
        var chosen: [String] = []
        for _ in 0..<count { chosen.append(words[Int(try SecureRandom.uniform(UInt32(words.count)))]) }
        let bits = Double(count) * log2(Double(words.count))
        return Generated(password: chosen.joined(separator: "-"), entropyBits: (bits * 10).rounded(.down) / 10)
    }

    /// Words usable in a passphrase from a dictionary file's lines: 4 to 8 lowercase ASCII
    /// letters (no proper nouns, possessives or accents, so every word is easy to type).
    public static func wordList(fromLines lines: [Substring]) -> [String] {
        lines.filter { line in (4...8).contains(line.utf8.count) && line.utf8.allSatisfy { $0 >= 0x61 && $0 <= 0x7a } }.map(String.init)
    }

    /// Probability that `length` uniform draws from the union hit every class (inclusion–exclusion).
    static func acceptanceProbability(_ length: Int, _ sizes: [Int]) -> Double {
        let total = Double(sizes.reduce(0, +))
        var probability = 0.0
        for mask in 0..<(1 << sizes.count) {
            let missing = (0..<sizes.count).filter { mask & (1 << $0) != 0 }
            let remaining = total - missing.reduce(0.0) { $0 + Double(sizes[$1]) }
            let sign = missing.count % 2 == 0 ? 1.0 : -1.0
            probability += sign * pow(remaining / total, Double(length))
        }
        return probability
    }
}

/// What a generator was asked that it cannot make (its own error: a generator needs no vault).
public enum GeneratorError: Error, Equatable, Sendable, CustomStringConvertible {
    case noCharacterClass
    case lengthOutOfRange(ClosedRange<Int>)
    /// Fewer than 1,000 distinct words: each would be worth under 10 bits.
    case wordListTooSmall(Int)
    case wordCountOutOfRange(ClosedRange<Int>)

    public var description: String {
        switch self {
        case .noCharacterClass: "choose at least one character class"
        case .lengthOutOfRange(let range): "length must be between \(range.lowerBound) and \(range.upperBound)"
        case .wordListTooSmall(let count): "the word list has \(count) distinct words; at least 1,000 are needed"
        case .wordCountOutOfRange(let range): "use between \(range.lowerBound) and \(range.upperBound) words"
        }
    }
}
