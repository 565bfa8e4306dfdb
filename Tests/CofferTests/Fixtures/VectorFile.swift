import Foundation

/// A test-vector file: `# comment` lines and `name: value` lines (SPEC.md §18).
struct VectorFile {
    let name: String
    let fields: [String: String]
    /// Every `name: value` line in order (keys may repeat, as mutations do).
    let lines: [(key: String, value: String)]

    init(path: String) throws {
        name = URL(fileURLWithPath: path).lastPathComponent
        var fields: [String: String] = [:]
        var lines: [(String, String)] = []
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let (key, value) = (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
            fields[key] = value
            lines.append((key, value))
        }
        self.fields = fields
        self.lines = lines
    }

    /// The vectors directory inside the test bundle.
    static var directory: String {
        (Bundle.module.resourcePath ?? ".") + "/Vectors"
    }

    static func load(_ relativePath: String) throws -> VectorFile {
        try VectorFile(path: directory + "/" + relativePath)
    }

    func string(_ key: String) -> String { fields[key] ?? "" }

    func hex(_ key: String) -> [UInt8] {
        let text = Array(string(key).utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < text.count {
            bytes.append(UInt8(String(decoding: text[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
            index += 2
        }
        return bytes
    }

    func int(_ key: String) -> Int { Int(string(key)) ?? -1 }
}
