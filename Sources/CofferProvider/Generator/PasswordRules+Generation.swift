import CofferStore
import CofferFormat
import func Glibc.log2

extension PasswordRules {
    /// The length a generated password gets when none is asked for: the generator's default,
    /// moved into the rule's bounds.
    public static let preferredLength = 20
    /// Longer rules are refused: no site needs them and the tables grow with the length.
    public static let longestGenerated = 256

    /// A password drawn uniformly from every password of the chosen length the rule accepts.
    public func generate(length: Int? = nil) throws -> PasswordGenerator.Generated {
        let generator = try RuleGenerator(self, length: length)
        return PasswordGenerator.Generated(password: try generator.next(), entropyBits: generator.entropyBits)
    }
}

/// Draws passwords uniformly from the set a rule accepts at one length, without rejection:
/// a table counts, for every position and state (which required sets are met, the last
/// character's kind and how often it repeats), the passwords that can still be completed, and
/// each character is drawn with the weight of the completions it leaves (SPEC.md §12.1).
/// The counts are doubles, rescaled per position, so the draw is uniform up to rounding
/// (relative error below 2⁻⁴⁰) and the entropy is log₂ of the exact count.
public struct RuleGenerator: Sendable {
    public let rules: PasswordRules
    public let length: Int
    /// log₂ of the number of passwords the rule accepts at `length`.
    public let entropyBits: Double

    /// The pool's characters grouped by which required sets they belong to.
    private let groups: [(signature: Int, characters: [UInt8])]
    private let complete: Int
    /// The most identical characters in a row, or `nil` when the rule cannot bind at this length.
    private let run: Int?
    /// `completions[i][state]`: passwords completable from `state` after `i` characters, scaled.
    private let completions: [[Double]]
    /// The moves out of each state, computed once.
    private let movesByState: [[Move]]

    public init(_ rules: PasswordRules, length requested: Int? = nil) throws(PasswordRulesError) {
        let minimum = rules.minimumLength ?? 1, maximum = rules.maximumLength ?? PasswordRules.longestGenerated
        guard minimum <= maximum else { throw PasswordRulesError(reason: "minlength \(minimum) is greater than maxlength \(maximum)") }
        let length = requested ?? min(max(PasswordRules.preferredLength, minimum), maximum)
        guard length >= minimum, length <= maximum else { throw PasswordRulesError(reason: "the rule asks for \(minimum) to \(maximum) characters, not \(length)") }
        guard (1...PasswordRules.longestGenerated).contains(length) else {
            throw PasswordRulesError(reason: "a generated password has 1 to \(PasswordRules.longestGenerated) characters, not \(length)")
        }
        guard rules.maximumConsecutive != 0 else { throw PasswordRulesError(reason: "max-consecutive 0 allows no password") }
        guard rules.required.count <= 10 else { throw PasswordRulesError(reason: "more than 10 required classes") }
        // The space is never drawn unless a required set has nothing else: a password with a
        // space is one people mistype and sites trim.
        let space = ASCIISet([0x20])
        let withoutSpace = rules.allowed.subtracting(space)
        let keepSpace = withoutSpace.isEmpty || rules.required.contains { $0.intersection(withoutSpace).isEmpty }
        let pool = keepSpace ? rules.allowed : withoutSpace
        var bySignature: [Int: [UInt8]] = [:]
        for byte in pool.members {
            var signature = 0
            for (index, set) in rules.required.enumerated() where set.contains(byte) { signature |= 1 << index }
            bySignature[signature, default: []].append(byte)
        }
        let groups = bySignature.keys.sorted().map { (signature: $0, characters: bySignature[$0]!) }
        let complete = (1 << rules.required.count) - 1
        let run = rules.maximumConsecutive.flatMap { $0 < length ? $0 : nil }
        let shape = StateShape(groups: groups.count, run: run)

        // completions[length] is 1 for the states that met every required set.
        var completions = [[Double]](repeating: [], count: length + 1)
        var scale = [Double](repeating: 0, count: length + 1)
        let states = shape.count(masks: complete + 1)
        let movesByState = (0..<states).map { RuleGenerator.moves(from: $0, shape: shape, groups: groups) }
        completions[length] = (0..<states).map { shape.mask(of: $0) == complete ? 1 : 0 }
        for position in stride(from: length - 1, through: 0, by: -1) {
            var layer = [Double](repeating: 0, count: states)
            for state in layer.indices {
                layer[state] = movesByState[state].reduce(0) { $0 + $1.weight * completions[position + 1][$1.next] }
            }
            let largest = layer.max() ?? 0
            if largest > 0 { for state in layer.indices { layer[state] /= largest } }
            scale[position] = scale[position + 1] + (largest > 0 ? log2(largest) : 0)
            completions[position] = layer
        }
        let start = shape.start
        guard completions[0][start] > 0 else { throw PasswordRulesError(reason: "no password of \(length) characters meets the rule") }
        self.rules = rules
        self.length = length
        self.groups = groups
        self.complete = complete
        self.run = run
        self.completions = completions
        self.movesByState = movesByState
        self.entropyBits = ((log2(completions[0][start]) + scale[0]) * 10).rounded(.down) / 10
    }

    /// One password; every call draws anew from libsodium's CSPRNG.
    public func next() throws -> String {
        var state = StateShape(groups: groups.count, run: run).start
        var random = SecureRandomStream()
        var output: [UInt8] = []
        output.reserveCapacity(length)
        for position in 0..<length {
            let moves = movesByState[state], next = completions[position + 1]
            var total = 0.0
            for move in moves { total += move.weight * next[move.next] }
            var target = try random.unitInterval() * total
            var chosen = moves.count - 1
            for (index, move) in moves.enumerated() {
                let weight = move.weight * next[move.next]
                guard weight > 0 else { continue }
                chosen = index
                if target < weight { break }
                target -= weight
            }
            let move = moves[chosen]
            switch move.kind {
            case .repeatLast:
                output.append(output[output.count - 1])
            case .group(let index):
                let characters = groups[index].characters
                // With runs limited, the group's move excludes the last character: draw among the rest.
                if run != nil, let last = output.last, let at = characters.firstIndex(of: last) {
                    let drawn = Int(try random.uniform(UInt32(characters.count - 1)))
                    output.append(characters[drawn < at ? drawn : drawn + 1])
                } else {
                    output.append(characters[Int(try random.uniform(UInt32(characters.count)))])
                }
            }
            state = move.next
        }
        return String(decoding: output, as: UTF8.self)
    }

    private enum MoveKind: Sendable { case group(Int), repeatLast }
    private typealias Move = (weight: Double, next: Int, kind: MoveKind)

    /// The characters that may follow `state`, grouped: a group's characters other than the last
    /// one (when runs are limited), or the last one again while the run allows.
    private static func moves(from state: Int, shape: StateShape, groups: [(signature: Int, characters: [UInt8])]) -> [Move] {
        let mask = shape.mask(of: state), last = shape.lastGroup(of: state), runLength = shape.runLength(of: state)
        var moves: [Move] = []
        for (index, group) in groups.enumerated() {
            let count = group.characters.count - (shape.limitsRuns && last == index ? 1 : 0)
            guard count > 0 else { continue }
            moves.append((Double(count), shape.index(mask: mask | group.signature, lastGroup: index, runLength: 1), .group(index)))
        }
        if shape.limitsRuns, let last, runLength < shape.run! {
            moves.append((1, shape.index(mask: mask, lastGroup: last, runLength: runLength + 1), .repeatLast))
        }
        return moves
    }
}

/// The generator's states numbered densely: (met sets, last character's group, run length);
/// without a binding `max-consecutive` only the met sets count.
private struct StateShape {
    let groups: Int
    let run: Int?
    var limitsRuns: Bool { run != nil }
    private var lastSlots: Int { limitsRuns ? groups + 1 : 1 }
    private var runSlots: Int { limitsRuns ? run! + 1 : 1 }

    func count(masks: Int) -> Int { masks * lastSlots * runSlots }
    var start: Int { 0 }
    func index(mask: Int, lastGroup: Int, runLength: Int) -> Int {
        limitsRuns ? (mask * lastSlots + lastGroup + 1) * runSlots + runLength : mask
    }
    func mask(of state: Int) -> Int { state / (lastSlots * runSlots) }
    func lastGroup(of state: Int) -> Int? {
        guard limitsRuns else { return nil }
        let slot = (state / runSlots) % lastSlots
        return slot == 0 ? nil : slot - 1
    }
    func runLength(of state: Int) -> Int { limitsRuns ? state % runSlots : 0 }
}
