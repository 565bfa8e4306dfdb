extension StringProtocol {
    /// Without leading and trailing spaces and tabs (any Unicode white space but line breaks):
    /// what import headers, tar numbers and helper input are trimmed of.
    package func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace && !$0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }

    /// Without leading and trailing white space, line breaks included (a pasted secret's).
    package var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
