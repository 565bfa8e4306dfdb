import CofferTerminalKit
/// Replaces every occurrence of a secret in a stream with `<concealed by coffer>`, as `op run`
/// does, across chunk boundaries: bytes that could be the start of a secret are held back until
/// the next chunk (or the end) decides. Values shorter than `minimumLength` bytes are not
/// masked: concealing every "1" or "ab" would mangle ordinary output, and such a value is not
/// a secret worth the name (SPEC.md §10.2 says so).
struct OutputMasker {
    static let replacement = Array("<concealed by coffer>".utf8)
    static let minimumLength = 4

    /// Longest first, so a secret that contains another is masked whole.
    private let secrets: [[UInt8]]
    private var pending: [UInt8] = []

    init(secrets: [String]) {
        var unique: [[UInt8]] = []
        for secret in secrets.map({ Array($0.utf8) }) where secret.count >= Self.minimumLength && !unique.contains(secret) {
            unique.append(secret)
        }
        self.secrets = unique.sorted { $0.count > $1.count }
    }

    var isEmpty: Bool { secrets.isEmpty }

    /// What can be written of `chunk` now; `final` flushes what was held back.
    mutating func feed(_ chunk: some Collection<UInt8>, final: Bool = false) -> [UInt8] {
        pending += chunk
        var output: [UInt8] = []
        output.reserveCapacity(pending.count)
        var index = 0
        scanning: while index < pending.count {
            for secret in secrets where pending[index] == secret[0] {
                let available = pending.count - index
                if available >= secret.count {
                    if pending[index..<index + secret.count].elementsEqual(secret) {
                        output += Self.replacement
                        index += secret.count
                        continue scanning
                    }
                } else if !final, pending[index...].elementsEqual(secret.prefix(available)) {
                    break scanning  // may be a secret cut by the chunk boundary: wait for more
                }
            }
            output.append(pending[index])
            index += 1
        }
        // Wipe what leaves the buffer: it may hold most of a secret.
        for position in 0..<index { pending[position] = 0 }
        pending.removeFirst(index)
        return output
    }
}
